package io.yarpc.transport.tchannel.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.yarpc.netty.internal.FrameCumulator;
import java.util.List;

/**
 * Cuts the byte stream into frames: reads the 2-byte {@code size}, waits for {@code size} bytes, and
 * passes on exactly that frame (header included) as a retained view of the buffers the socket was read
 * into, never a copy of its own. A size below 16 cannot be a frame: the decoder passes on one {@link
 * BadFrameSize} and then discards everything that follows (the connection handler answers with a fatal
 * error and closes). Never throws.
 *
 * <p><b>Reads and frames.</b> While a frame of {@value #LARGE_FRAME} bytes or more is partial, the
 * cumulation is {@link FrameCumulator}'s: reads of a few KiB or more are appended to a composite as they
 * are. A frame within one buffer is a retained slice of it; a frame across reads (a large message's 64 KiB
 * frames rarely end where a read does) is a composite of retained slices of the reads under it ({@link
 * FramePieces#retainedRange}), never a slice of the composite cumulation itself, so the decoder drops
 * consumed reads from the cumulation after every read and a held frame pins the reads it lies in and
 * nothing else. Netty's merge cumulation copied the partial frame and the next read into a new buffer
 * (rounded up to a power of two) whenever a frame of the old one was held, so a 1 MiB message was copied
 * once more and held up to twice its size in pooled buffers until its handler was done. While a smaller
 * frame is partial, the partial frame and the read are merged into one buffer as before (a composite
 * cumulation is flattened): a copy of less than {@value #LARGE_FRAME} bytes plus the read costs less
 * than a composite per frame, and small calls keep getting their frames as pooled slices of one buffer.
 */
public final class FrameDecoder extends ByteToMessageDecoder {
  /** An impossible frame size was read; nothing more will be decoded on this connection. */
  public record BadFrameSize(int size) {}

  /** The smallest frame that is composed from the reads it spans rather than merged: 16 KiB. */
  static final int LARGE_FRAME = 16 << 10;

  /** See the class comment: compose while a large frame is partial, else merge. */
  private static final Cumulator CUMULATOR =
      (alloc, cumulation, in) -> {
        if (cumulation.readableBytes() >= 2
            && cumulation.getUnsignedShort(cumulation.readerIndex()) >= LARGE_FRAME) {
          return FrameCumulator.INSTANCE.cumulate(alloc, cumulation, in);
        }
        if (cumulation instanceof CompositeByteBuf && cumulation.isReadable()) {
          return FrameCumulator.flatten(alloc, cumulation, in);
        }
        return MERGE_CUMULATOR.cumulate(alloc, cumulation, in);
      };

  private boolean failed;

  /** A decoder for one connection. */
  public FrameDecoder() {
    setCumulator(CUMULATOR);
    // Drop consumed bytes after every read, not after 16 (a plain cumulation only when no frame
    // points into it): a frame pins the buffer under it, which should not grow over many reads.
    setDiscardAfterReads(1);
  }

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    if (failed) {
      in.skipBytes(in.readableBytes());
      return;
    }
    if (in.readableBytes() < 2) {
      return;
    }
    int size = in.getUnsignedShort(in.readerIndex());
    if (size < Frames.HEADER_SIZE) {
      failed = true;
      in.skipBytes(in.readableBytes());
      out.add(new BadFrameSize(size));
      return;
    }
    if (in.readableBytes() < size) {
      return;
    }
    // from a composite cumulation: a view of the reads under the frame, not a slice of it
    ByteBuf frame =
        in instanceof CompositeByteBuf
            ? FramePieces.retainedRange(in, in.readerIndex(), size)
            : in.retainedSlice(in.readerIndex(), size);
    in.skipBytes(size);
    out.add(frame);
  }
}
