package io.yarpc.transport;

/**
 * The server's end of a stream, handed to a stream handler. The handler ends the stream by completing the
 * future it returned: normally for success, exceptionally (with a {@link io.yarpc.errors.YarpcException})
 * for an error status. If the client cancels, pending and later operations fail with
 * {@link io.yarpc.errors.Code#CANCELLED}.
 */
public interface ServerStream extends MessageStream {
  /**
   * Sends the stream's response headers; at most once, before the first message. Transports that cannot
   * send stream headers throw a {@link io.yarpc.errors.YarpcException} with code {@code unimplemented}.
   *
   * @throws IllegalStateException when headers or a message were already sent
   */
  void sendHeaders(Headers headers);

  /**
   * Asks for the stream's messages to be compressed with {@code compressor} (gRPC: a registered compressor
   * name such as {@code gzip}); call it before the headers or the first message. Transports that do not
   * compress, or do not know the compressor, ignore it (the default).
   */
  default void setCompression(String compressor) {}

  /**
   * Sets the headers sent when the stream ends (gRPC trailers), replacing any set before; call it before
   * completing the handler's future. Transports that cannot send trailers throw a {@link
   * io.yarpc.errors.YarpcException} with code {@code unimplemented} (the default).
   */
  default void setTrailers(Headers trailers) {
    throw io.yarpc.errors.YarpcException.of(
        io.yarpc.errors.Code.UNIMPLEMENTED, "this transport cannot send stream trailers");
  }
}
