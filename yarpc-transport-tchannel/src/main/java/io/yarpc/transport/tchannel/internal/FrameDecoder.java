package io.yarpc.transport.tchannel.internal;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.util.List;

/**
 * Cuts the byte stream into frames: reads the 2-byte {@code size}, waits for {@code size} bytes, and
 * passes on a retained slice of exactly that frame (header included) — no copy beyond what Netty's
 * cumulation does when a frame spans socket reads (the cumulation is compacted after every read, so a
 * frame pins a buffer of a few frames at most). A size below 16 cannot be a frame: the decoder passes
 * on one {@link BadFrameSize} and then discards everything that follows (the connection handler answers
 * with a fatal error and closes). Never throws.
 */
public final class FrameDecoder extends ByteToMessageDecoder {
  /** An impossible frame size was read; nothing more will be decoded on this connection. */
  public record BadFrameSize(int size) {}

  private boolean failed;

  /** A decoder for one connection. */
  public FrameDecoder() {
    // Compact the cumulation after every read (when no frame still points into it), not after 16: a
    // frame is a slice that pins the buffer under it, which should not have grown over many reads.
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
    out.add(in.readRetainedSlice(size));
  }
}
