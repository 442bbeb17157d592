package io.yarpc.transport;

import java.util.concurrent.CompletableFuture;

/**
 * Sends oneway calls: the future completes when the server has acknowledged receipt (not when the handler
 * ran). The contract is {@link UnaryOutbound}'s — the call path validates and bounds the call by its
 * deadline, the outbound owns and releases the request body exactly once, stops the exchange when the
 * future is cancelled, is thread-safe and non-blocking, and fails with {@code unavailable} when not
 * running — with an acknowledgement in place of a response.
 */
public interface OnewayOutbound extends TransportComponent {
  /** Sends {@code request}. */
  CompletableFuture<Void> callOneway(Request request);
}
