package io.yarpc.transport;

import java.util.concurrent.CompletableFuture;

/**
 * The client's end of a stream, returned by a {@link StreamOutbound}. Whoever holds it must end it: by
 * receiving until end of stream (after {@link #halfClose()}), or by {@link #cancel()}.
 */
public interface ClientStream extends MessageStream {
  /** The server's stream headers; completes when they arrive (empty if the server sent none). */
  CompletableFuture<Headers> headers();

  /**
   * The server's stream trailers: completes when the stream has ended, normally or not, before the receive
   * that reports the end completes; empty when the server sent none or the transport has no trailers (the
   * default).
   */
  default CompletableFuture<Headers> trailers() {
    return CompletableFuture.completedFuture(Headers.empty());
  }

  /** Tells the server no more messages will be sent; receiving goes on. Idempotent. */
  void halfClose();

  /** Abandons the stream: the server sees {@code cancelled}, pending operations fail. Idempotent. */
  void cancel();
}
