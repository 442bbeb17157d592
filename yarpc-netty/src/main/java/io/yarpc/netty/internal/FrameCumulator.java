package io.yarpc.netty.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.ByteToMessageDecoder.Cumulator;

/**
 * How a connection's frame decoder keeps the bytes of a frame that one read ended inside of, until the next
 * read completes it: without copying reads of {@value #COMPOSE_MIN} bytes or more. Used by HTTP/2 (h2c, and
 * h2 over TLS, where the reads are the TLS handler's output) and by TChannel.
 *
 * <p>Netty's default ({@link ByteToMessageDecoder#MERGE_CUMULATOR}) copies every read that arrives while a
 * partial frame is pending into one growing buffer, reallocating (and copying its unread bytes again) as it
 * grows or whenever a slice of it is still held. A large message arrives as
 * frames (16 KiB DATA frames, 64 KiB TChannel frames) that rarely end where a read ends, so nearly every
 * byte of it was copied once or twice: about a tenth of the server's CPU per 1 MiB h2c call, measured with
 * {@code perf}. Here:
 *
 * <ul>
 *   <li>a large read is appended to a {@link CompositeByteBuf} as it is (a frame that spans two reads is
 *       then a range across two components, which the decoder copies out of both (HTTP/2) or hands on as
 *       views of the two reads (TChannel), without having copied the reads first);
 *   <li>a small read is merged into a plain cumulation, where a copy of a few hundred bytes is cheaper
 *       than a composite's bookkeeping;
 *   <li>a small read is appended to a composite while its unread rest is large and it has fewer than
 *       {@value #MAX_COMPONENTS} components; otherwise the rest and the read are copied into one new
 *       buffer. So a connection of small calls goes back to reading frame headers from one buffer, and a
 *       peer trickling a frame in tiny segments cannot make a composite of thousands of read buffers (the
 *       copy is at most one partial frame per {@value #MAX_COMPONENTS} reads).
 * </ul>
 *
 * <p>The decoder discards a composite's consumed components after each batch of reads only while nothing
 * else holds the cumulation: a decoder using this cumulator must not hand on slices of a composite
 * cumulation itself, but copy each frame out (HTTP/2) or hand on retained slices of the components under it
 * (TChannel). Stateless and shared; every path releases {@code in} or hands it to the result, and keeps the
 * decoder's cumulation when it throws, as {@link Cumulator} requires.
 */
public final class FrameCumulator implements Cumulator {
  /** The shared instance. */
  public static final FrameCumulator INSTANCE = new FrameCumulator();

  /** The smallest read appended without a copy. */
  public static final int COMPOSE_MIN = 4096;

  /** The most components a composite takes small reads into before it is copied into one buffer. */
  public static final int MAX_COMPONENTS = 16;

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

  /**
   * One new buffer with {@code cumulation}'s unread bytes, then {@code in}'s; releases both (keeps
   * {@code cumulation} when it throws, as {@link Cumulator} requires). For a decoder that leaves a composite
   * cumulation for a plain one again.
   */
  public static ByteBuf flatten(ByteBufAllocator alloc, ByteBuf cumulation, ByteBuf in) {
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
