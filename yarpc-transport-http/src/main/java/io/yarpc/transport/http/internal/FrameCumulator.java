package io.yarpc.transport.http.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.ByteToMessageDecoder.Cumulator;

/**
 * How an HTTP/2 connection's frame decoder keeps the bytes of a frame that one read ended inside of, until
 * the next read completes it: without copying reads of {@value #COMPOSE_MIN} bytes or more. Used on h2c and
 * on h2 over TLS (where the reads are the TLS handler's output) alike.
 *
 * <p>Netty's default ({@link ByteToMessageDecoder#MERGE_CUMULATOR}) copies every read that arrives while a
 * partial frame is pending into one growing buffer, reallocating (and copying again) as it grows. A large
 * body arrives as 16 KiB DATA frames that rarely end where a read ends, so nearly every byte of it was
 * copied once or twice before the stream copied its frames into its own pieces ({@link ReceivedContent}):
 * about a tenth of the server's CPU per 1 MiB h2c call, measured with {@code perf}. Here:
 *
 * <ul>
 *   <li>a large read is appended to a {@link CompositeByteBuf} as it is (a frame that spans two reads is
 *       then a slice across two components, which {@link ReceivedContent#copy} reads without a copy of its
 *       own);
 *   <li>a small read is merged into a plain cumulation, where a copy of a few hundred bytes is cheaper
 *       than a composite's bookkeeping;
 *   <li>a small read is appended to a composite while its unread rest is large and it has fewer than
 *       {@value #MAX_COMPONENTS} components; otherwise the rest and the read are copied into one new
 *       buffer. So a connection of small calls goes back to reading frame headers from one buffer, and a
 *       peer trickling a frame in tiny segments cannot make a composite of thousands of read buffers (the
 *       copy is at most one partial frame per {@value #MAX_COMPONENTS} reads).
 * </ul>
 *
 * <p>The decoder discards a composite's consumed components after each batch of reads, as long as nothing
 * else holds the cumulation: every frame must be copied out, not kept as a slice. Stateless and shared;
 * every path releases {@code in} or hands it to the result, and keeps the decoder's cumulation when it
 * throws, as {@link Cumulator} requires.
 */
final class FrameCumulator implements Cumulator {
  /** The shared instance. */
  static final FrameCumulator INSTANCE = new FrameCumulator();

  /** The smallest read appended without a copy. */
  static final int COMPOSE_MIN = 4096;

  /** The most components a composite takes small reads into before it is copied into one buffer. */
  static final int MAX_COMPONENTS = 16;

  private FrameCumulator() {}

  @Override
  public ByteBuf cumulate(ByteBufAllocator alloc, ByteBuf cumulation, ByteBuf in) {
    boolean small = in.readableBytes() < COMPOSE_MIN;
    if (cumulation == in || !cumulation.isReadable()) {
      return ByteToMessageDecoder.MERGE_CUMULATOR.cumulate(alloc, cumulation, in);
    }
    if (!(cumulation instanceof CompositeByteBuf)) {
      return small
          ? ByteToMessageDecoder.MERGE_CUMULATOR.cumulate(alloc, cumulation, in)
          : ByteToMessageDecoder.COMPOSITE_CUMULATOR.cumulate(alloc, cumulation, in);
    }
    if (small
        && (cumulation.readableBytes() < COMPOSE_MIN
            || ((CompositeByteBuf) cumulation).numComponents() >= MAX_COMPONENTS)) {
      return flatten(alloc, cumulation, in);
    }
    return ByteToMessageDecoder.COMPOSITE_CUMULATOR.cumulate(alloc, cumulation, in);
  }

  /** One new buffer with {@code cumulation}'s unread bytes, then {@code in}'s; releases both. */
  private static ByteBuf flatten(ByteBufAllocator alloc, ByteBuf cumulation, ByteBuf in) {
    ByteBuf merged = null;
    try {
      merged = alloc.buffer(cumulation.readableBytes() + in.readableBytes());
      merged.writeBytes(cumulation, cumulation.readerIndex(), cumulation.readableBytes());
      merged.writeBytes(in, in.readerIndex(), in.readableBytes());
      cumulation.release();
      ByteBuf result = merged;
      merged = null;
      return result;
    } finally {
      in.release();
      if (merged != null) {
        merged.release(); // failed: the decoder keeps its cumulation
      }
    }
  }
}
