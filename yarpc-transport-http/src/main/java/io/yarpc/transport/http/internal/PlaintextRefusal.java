package io.yarpc.transport.http.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http2.Http2Error;
import java.nio.charset.StandardCharsets;

/**
 * What a plaintext client of an inbound that requires TLS gets before the connection is closed: an HTTP/1.1
 * client a {@code 400 Bad Request} saying so (as Go's {@code net/http} answers plaintext on a TLS port), an
 * HTTP/2 client with prior knowledge an empty {@code SETTINGS} (the server's preface) and {@code
 * GOAWAY(INADEQUATE_SECURITY)}. Fixed bytes: no request is parsed to make them. Stateless.
 */
final class PlaintextRefusal {
  /** The body of the HTTP/1.1 answer. */
  static final String MESSAGE = "this port requires TLS\n";

  private static final byte[] HTTP1 =
      ("HTTP/1.1 400 Bad Request\r\n"
              + "Content-Type: text/plain; charset=utf-8\r\n"
              + "Content-Length: "
              + MESSAGE.length()
              + "\r\n"
              + "Connection: close\r\n"
              + "\r\n"
              + MESSAGE)
          .getBytes(StandardCharsets.US_ASCII);

  private static final byte[] GOAWAY_DEBUG =
      "this port requires TLS".getBytes(StandardCharsets.US_ASCII);

  private PlaintextRefusal() {}

  /** The HTTP/1.1 answer, in a new buffer the caller writes (and so releases). */
  static ByteBuf http1(ByteBufAllocator alloc) {
    return alloc.buffer(HTTP1.length).writeBytes(HTTP1);
  }

  /** The HTTP/2 frames, in a new buffer the caller writes (and so releases). */
  static ByteBuf http2(ByteBufAllocator alloc) {
    ByteBuf b = alloc.buffer(9 + 9 + 8 + GOAWAY_DEBUG.length);
    // SETTINGS, no parameters: the server's connection preface must come first
    frameHeader(b, 0, 0x4);
    // GOAWAY: last stream 0 (nothing was processed), INADEQUATE_SECURITY, a short debug text
    frameHeader(b, 8 + GOAWAY_DEBUG.length, 0x7);
    b.writeInt(0);
    b.writeInt((int) Http2Error.INADEQUATE_SECURITY.code());
    b.writeBytes(GOAWAY_DEBUG);
    return b;
  }

  private static void frameHeader(ByteBuf b, int length, int type) {
    b.writeMedium(length);
    b.writeByte(type);
    b.writeByte(0); // flags
    b.writeInt(0); // stream 0: the connection
  }
}
