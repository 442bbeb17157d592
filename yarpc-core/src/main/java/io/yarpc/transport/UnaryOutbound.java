package io.yarpc.transport;

import java.util.concurrent.CompletableFuture;

/**
 * Sends unary calls. The outbound owns the request body once called and releases it when sent; the
 * caller owns the returned response's body. Cancelling the returned future cancels the call on the wire.
 * Errors complete the future with a {@link io.yarpc.errors.YarpcException}, which may carry a response.
 */
public interface UnaryOutbound extends TransportComponent {
  /** Sends {@code request}. */
  CompletableFuture<Response> call(Request request);
}
