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
}
