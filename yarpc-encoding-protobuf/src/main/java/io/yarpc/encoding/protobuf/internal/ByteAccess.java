package io.yarpc.encoding.protobuf.internal;

import io.yarpc.internal.ByteBuffersInputStream;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * Reading a body's byte access ({@link io.yarpc.transport.Body#byteBuffers()}) as a stream without
 * copying it, for the decoders that need a stream ({@link JsonDecoding}, and grpc-java marshallers in
 * {@link MessageCodec}).
 */
final class ByteAccess {
  private ByteAccess() {}

  /**
   * A stream over {@code views}: the array of a single heap view itself, else the views in order. The
   * views and the memory behind them stay the body's: the stream reads them in place, so it is used only
   * until the body is released, and needs no closing.
   */
  static InputStream stream(List<ByteBuffer> views) {
    ByteBuffer first = views.size() == 1 ? views.get(0) : null;
    return first != null && first.hasArray()
        ? new ByteArrayInputStream(
            first.array(), first.arrayOffset() + first.position(), first.remaining())
        : new ByteBuffersInputStream(views);
  }
}
