package io.yarpc.transport.tchannel.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import io.yarpc.transport.Body;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Where one connection's frames go: the connection handler's context, the allocator for the frames this
 * side writes, and the connection's event loop. {@link MessageWriter} cuts a message into frames; this
 * class puts finished frames on the channel. Shared by the handshake-free parts of a {@link Connection}
 * ({@link IncomingCalls}, {@link OutgoingCalls}) so that they need no reference to the handler itself.
 *
 * <p>Threads: {@link #attach} is called once, from {@code handlerAdded}, before any other method; the
 * write methods are called on the event loop; {@link #runOnLoop}, {@link #channel} and {@link #alloc} from
 * any thread.
 *
 * <p>Buffers: every frame handed to a write method belongs to the channel from then on (Netty releases it
 * once written or failed). {@link #writeMessage} also takes the message's body and releases it exactly
 * once, when the last frame has been written or has failed. {@link #releaseAll} is for frames and bodies
 * that will never be written.
 */
final class FrameOutput {
  /** Told about every flush, on the event loop: the connection's idle and write-progress watch. */
  interface FlushListener {
    /**
     * Frames were written and flushed.
     *
     * @param callMessage whether they were a call message's (call req or res frames, or the error frame
     *     that replaces a call res), which counts as activity on the connection
     */
    void flushed(boolean callMessage);
  }

  private static final FlushListener NONE = callMessage -> {};

  private final ByteBufAllocator alloc;
  private volatile ChannelHandlerContext ctx;
  private FlushListener listener = NONE;
  private boolean
      reading; // event loop only: frames are being read; answers wait for the read's end
  private boolean unflushed;

  /** An output whose frames are allocated from {@code alloc} (the transport's pooled direct memory). */
  FrameOutput(ByteBufAllocator alloc) {
    this.alloc = alloc;
  }

  /** Binds the output to the connection handler's context; once, before anything is written. */
  void attach(ChannelHandlerContext ctx) {
    this.ctx = ctx;
  }

  /** Sets the listener told about every flush; before anything is written. */
  void listen(FlushListener listener) {
    this.listener = listener;
  }

  /** The allocator for frames this side writes. */
  ByteBufAllocator alloc() {
    return alloc;
  }

  /** The channel (null before {@link #attach}). */
  Channel channel() {
    ChannelHandlerContext c = ctx;
    return c == null ? null : c.channel();
  }

  /** Whether the channel is open and connected. */
  boolean isOpen() {
    return ctx.channel().isActive();
  }

  /**
   * Event loop: the connection starts handing on what one read brought; until {@link #readComplete},
   * {@link #writeAnswer answers} are written without a flush.
   */
  void reading() {
    reading = true;
  }

  /** Event loop: the read is over; answers written during it are flushed (one system call for all). */
  void readComplete() {
    reading = false;
    if (unflushed) {
      unflushed = false;
      ctx.flush();
      listener.flushed(false);
    }
  }

  /**
   * Event loop: writes a frame that answers one just read (a ping res, an error frame); while a read is
   * being handed on, the flush waits for its end, so a flood of small frames costs one flush per read
   * instead of one per frame.
   */
  void writeAnswer(ByteBuf frame) {
    if (reading) {
      ctx.write(frame);
      unflushed = true;
    } else {
      writeAndFlush(frame);
    }
  }

  /** Event loop: writes one frame and flushes. */
  ChannelFuture writeAndFlush(ByteBuf frame) {
    ChannelFuture f = ctx.writeAndFlush(frame);
    listener.flushed(false);
    return f;
  }

  /** Event loop: writes a message's frames and flushes; {@code body} is released once they are written. */
  void writeMessage(List<ByteBuf> frames, Body body) {
    ChannelHandlerContext c = ctx;
    ChannelFuture last = null;
    for (ByteBuf frame : frames) {
      last = c.write(frame);
    }
    c.flush();
    listener.flushed(true);
    if (body != null) {
      if (last == null) {
        body.release();
      } else {
        last.addListener(f -> body.release());
      }
    }
  }

  /** Releases frames that will not be written (those still referenced) and {@code body}, if any. */
  static void releaseAll(List<ByteBuf> frames, Body body) {
    for (ByteBuf b : frames) {
      if (b.refCnt() > 0) {
        b.release();
      }
    }
    if (body != null) {
      body.release();
    }
  }

  /** Event loop: runs {@code task} on the event loop after {@code nanos}. */
  ScheduledFuture<?> schedule(Runnable task, long nanos) {
    return ctx.executor().schedule(task, nanos, TimeUnit.NANOSECONDS);
  }

  /** The event loop's clock, in nanoseconds (a test's embedded loop may move it by hand). */
  long nanoTime() {
    return ctx.executor().ticker().nanoTime();
  }

  /** Whether the caller runs on the channel's event loop. */
  boolean inEventLoop() {
    return ctx.channel().eventLoop().inEventLoop();
  }

  /** Runs {@code task} on the event loop (now when already there); {@code rejected} when the loop is gone. */
  void runOnLoop(Runnable task, Runnable rejected) {
    EventLoop loop = ctx.channel().eventLoop();
    if (loop.inEventLoop()) {
      task.run();
      return;
    }
    try {
      loop.execute(task);
    } catch (RejectedExecutionException e) {
      rejected.run();
    }
  }
}
