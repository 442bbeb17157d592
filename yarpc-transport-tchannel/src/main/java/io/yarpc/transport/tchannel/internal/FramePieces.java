package io.yarpc.transport.tchannel.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Ranges of received frames as the read buffers under them. A frame that spans socket reads is a {@link
 * CompositeByteBuf} of slices of those reads ({@link FrameDecoder}); a range of it is kept as a slice of
 * the one read it lies in, or a composite of slices of the reads it spans, never as a slice of the frame:
 * so what is kept pins only the reads under it, {@link PendingBytes} finds those reads, and byte access
 * reaches the reads' arrays without Netty's per-component views.
 */
final class FramePieces {
  private FramePieces() {}

  /**
   * A retained view of {@code length} bytes of {@code frame} from {@code index}: a slice of the frame,
   * of the one component the range lies in, or a composite of slices of the components it spans.
   */
  static ByteBuf retainedRange(ByteBuf frame, int index, int length) {
    if (!(frame instanceof CompositeByteBuf c)) {
      return frame.retainedSlice(index, length);
    }
    if (length == 0) {
      return Unpooled.EMPTY_BUFFER; // pins nothing
    }
    int k = c.toComponentIndex(index);
    int last = c.toComponentIndex(index + length - 1);
    int from = index - c.toByteIndex(k);
    if (k == last) {
      return c.internalComponent(k).retainedSlice(from, length);
    }
    // room for every part: a composite over its limit would copy them into one new buffer
    CompositeByteBuf range = c.alloc().compositeBuffer(last - k + 1);
    try {
      for (int left = length; left > 0; k++, from = 0) {
        ByteBuf part = c.internalComponent(k);
        int n = Math.min(left, part.readableBytes() - from);
        range.addComponent(true, part.retainedSlice(from, n));
        left -= n;
      }
    } catch (Throwable t) {
      range.release();
      throw t;
    }
    return range;
  }

  /**
   * Views of the readable bytes of {@code buffers}, in order (see {@link #addViews}); one heap buffer
   * gets a list of one without a growable list.
   */
  static List<ByteBuffer> views(List<ByteBuf> buffers) {
    if (buffers.size() == 1 && buffers.get(0).hasArray()) {
      return List.of(arrayView(buffers.get(0)));
    }
    List<ByteBuffer> views = new ArrayList<>(buffers.size() + 4); // a chunk across reads adds one
    for (ByteBuf b : buffers) {
      addViews(b, views);
    }
    return views;
  }

  /** A view of a heap buffer's readable bytes over its own array. */
  private static ByteBuffer arrayView(ByteBuf heap) {
    return ByteBuffer.wrap(
        heap.array(), heap.arrayOffset() + heap.readerIndex(), heap.readableBytes());
  }

  /**
   * Adds views of {@code buf}'s readable bytes to {@code out}, in order: one wrapping the array of each
   * heap piece (a slice of a read, or each component of a composite of them), Netty's views otherwise.
   */
  private static void addViews(ByteBuf buf, List<ByteBuffer> out) {
    if (buf.hasArray()) {
      out.add(arrayView(buf));
    } else if (buf instanceof CompositeByteBuf c
        && buf.readerIndex() == 0
        && buf.writerIndex() == buf.capacity()) { // whole, as retainedRange makes them
      for (int k = 0; k < c.numComponents(); k++) {
        addViews(c.internalComponent(k), out);
      }
    } else {
      Collections.addAll(out, buf.nioBuffers());
    }
  }
}
