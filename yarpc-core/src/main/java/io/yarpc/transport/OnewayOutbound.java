package io.yarpc.transport;

import java.util.concurrent.CompletableFuture;

/**
 * Sends oneway calls: the future completes when the server has acknowledged receipt. The outbound owns
 * the request body once called and releases it when sent.
 */
public interface OnewayOutbound extends TransportComponent {
  /** Sends {@code request}. */
  CompletableFuture<Void> callOneway(Request request);
}
