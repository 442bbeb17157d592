package io.yarpc.transport;

import java.util.concurrent.CompletableFuture;

/**
 * What both ends of a stream share: the call's metadata, sending and receiving messages.
 *
 * <p><b>Flow control.</b> {@link #receive()} asks the peer for exactly one message, so a receiver never
 * buffers more than it asked for. {@link #send} returns a future that completes once the transport can
 * take the next message; a sender must wait for it before sending again (a second send while one is
 * pending fails with {@link IllegalStateException}). Together these keep a fast sender from making a slow
 * receiver buffer without bound.
 *
 * <p>Failures (the peer cancelled, the deadline passed, the connection broke) complete the futures
 * exceptionally with a {@link io.yarpc.errors.YarpcException}.
 */
public interface MessageStream {
  /** The call's metadata. */
  RequestMeta meta();

  /**
   * Sends one message; the stream takes ownership of its body and releases it once written (or on
   * failure). The future completes when the next message may be sent.
   */
  CompletableFuture<Void> send(StreamMessage message);

  /**
   * Receives the next message, or {@code null} at the end of the stream. The caller owns the received
   * message and releases it once consumed. At most one receive may be pending.
   */
  CompletableFuture<StreamMessage> receive();
}
