package io.yarpc.netty.internal;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;

/**
 * Makes a connection's reads land in heap buffers under native I/O, for transports that receive into
 * heap (their {@code receiveIntoHeap} option): Netty's epoll and io_uring channels always read into
 * direct memory, whatever the channel's allocator prefers, so this handler, first in the pipeline, copies
 * each direct buffer read into a heap buffer of the channel's allocator and releases the direct one.
 * Everything after it — TLS, codecs, the bodies handed to encodings — then sees what it sees under NIO,
 * where the JDK's socket read makes the same copy (from its own direct buffer into the heap one).
 *
 * <p>Stateless and {@linkplain Sharable sharable}; {@link #install} adds it only where it is needed.
 */
@Sharable
public final class HeapReads extends ChannelInboundHandlerAdapter {
  /** The name {@link #install} gives the handler in the pipeline. */
  public static final String NAME = "yarpc-heap-reads";

  private static final HeapReads INSTANCE = new HeapReads();

  private HeapReads() {}

  /**
   * Adds the copy first in {@code pipeline} when {@code receiveIntoHeap} and the pipeline's channel is a
   * native one ({@link EpollSocketChannel}, {@link IoUringSocketChannel}); otherwise does nothing: NIO
   * reads into heap by itself when the channel's allocator prefers heap. Call it from the channel's
   * initializer, before the first read.
   */
  public static void install(ChannelPipeline pipeline, boolean receiveIntoHeap) {
    Channel ch = pipeline.channel();
    if (receiveIntoHeap
        && (ch instanceof EpollSocketChannel || ch instanceof IoUringSocketChannel)) {
      pipeline.addFirst(NAME, INSTANCE);
    }
  }

  /**
   * Takes the copy out of {@code pipeline} again, if {@link #install} added it: for a protocol found to
   * copy what it keeps of every read itself (HTTP/2 copies each DATA frame into the stream's own heap
   * pieces), where copying the reads first would copy every byte twice.
   */
  public static void remove(ChannelPipeline pipeline) {
    if (pipeline.get(NAME) != null) {
      pipeline.remove(NAME);
    }
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (msg instanceof ByteBuf buf && buf.isDirect()) {
      ByteBuf heap;
      try {
        heap = ctx.alloc().heapBuffer(buf.readableBytes());
        heap.writeBytes(buf, buf.readerIndex(), buf.readableBytes());
      } finally {
        buf.release();
      }
      ctx.fireChannelRead(heap);
    } else {
      ctx.fireChannelRead(msg);
    }
  }
}
