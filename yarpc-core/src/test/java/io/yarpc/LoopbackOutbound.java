package io.yarpc;

import io.yarpc.transport.AbstractLifecycle;
import io.yarpc.transport.ClientStream;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.OnewayOutbound;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.Router;
import io.yarpc.transport.StreamOutbound;
import io.yarpc.transport.UnaryOutbound;
import java.util.concurrent.CompletableFuture;

/**
 * Test double for core tests (core has no transport of its own): an inbound that only keeps the router,
 * and an outbound that hands requests straight to that router's handlers.
 */
final class LoopbackOutbound extends AbstractLifecycle
    implements Inbound, UnaryOutbound, OnewayOutbound, StreamOutbound {
  private volatile Router router;
  volatile CompletableFuture<Response> lastServerFuture;

  @Override
  public void setRouter(Router router) {
    this.router = router;
  }

  @Override
  public String transportName() {
    return "loopback";
  }

  @Override
  protected void doStart() {}

  @Override
  protected void doStop() {}

  @Override
  public CompletableFuture<Response> call(Request request) {
    try {
      CompletableFuture<Response> f = router.choose(request.meta()).unary().handle(request);
      lastServerFuture = f;
      CompletableFuture<Response> client = new CompletableFuture<>();
      client.whenComplete(
          (r, e) -> {
            if (client.isCancelled()) {
              f.cancel(false);
            }
          });
      f.whenComplete(
          (r, e) -> {
            boolean taken = e == null ? client.complete(r) : client.completeExceptionally(e);
            if (!taken && r != null) {
              r.body().release();
            }
          });
      return client;
    } catch (RuntimeException e) {
      request.body().release();
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public CompletableFuture<Void> callOneway(Request request) {
    try {
      CompletableFuture<Void> f = router.choose(request.meta()).oneway().handle(request);
      if (f.isCompletedExceptionally()) {
        return f;
      }
      return CompletableFuture.completedFuture(null);
    } catch (RuntimeException e) {
      request.body().release();
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public CompletableFuture<ClientStream> callStream(RequestMeta meta) {
    return CompletableFuture.failedFuture(
        new UnsupportedOperationException("no streams in core tests"));
  }
}
