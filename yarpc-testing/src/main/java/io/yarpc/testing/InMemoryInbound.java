package io.yarpc.testing;

import static java.util.Objects.requireNonNull;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.Checks;
import io.yarpc.transport.AbstractLifecycle;
import io.yarpc.transport.Body;
import io.yarpc.transport.ClientStream;
import io.yarpc.transport.DeadlinePolicy;
import io.yarpc.transport.HandlerSpec;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.InboundCalls;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.Router;
import io.yarpc.transport.RpcType;
import io.yarpc.transport.Transport;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server end of an {@link InMemoryTransport}: serves the calls of the transport's outbounds through
 * the router its dispatcher gives it. Get one from {@link InMemoryTransport#inbound()}; at most one inbound
 * per transport runs at a time. Stopping it fails the streams still open with {@code unavailable}.
 */
public final class InMemoryInbound extends AbstractLifecycle implements Inbound {
  private static final Logger log = LoggerFactory.getLogger(InMemoryInbound.class);

  private final InMemoryTransport transport;
  private final Set<InMemoryStream> streams = ConcurrentHashMap.newKeySet();
  private volatile Router router;

  InMemoryInbound(InMemoryTransport transport) {
    this.transport = transport;
  }

  /** Sets the router calls are served from; the dispatcher calls this before {@link #start()}. */
  @Override
  public void setRouter(Router router) {
    this.router = requireNonNull(router, "router");
  }

  /** The in-memory transport this inbound belongs to. */
  @Override
  public List<Transport> transports() {
    return List.of(transport);
  }

  /** {@value InMemoryTransport#NAME}. */
  @Override
  public String transportName() {
    return InMemoryTransport.NAME;
  }

  @Override
  protected void doStart() {
    if (router == null) {
      throw new IllegalStateException("in-memory inbound needs a router before it starts");
    }
    transport.bind(this);
  }

  @Override
  protected void doStop() {
    transport.unbind(this);
    YarpcException closed = YarpcException.of(Code.UNAVAILABLE, "in-memory inbound was stopped");
    for (InMemoryStream s : streams) {
      s.abort(closed);
    }
    streams.clear();
  }

  @Override
  public String toString() {
    return "InMemoryInbound{" + transport + "}";
  }

  // ---- server side of each RPC type; run on the transport's I/O threads
  // ------------------------------

  /** Routes a unary call and completes {@code result} with what the client receives. */
  void serveUnary(RequestMeta meta, Body body, CompletableFuture<Response> result) {
    String what = describe(meta);
    if (result.isDone()) { // the client gave up before the request "arrived"
      body.release();
      return;
    }
    CompletableFuture<Response> server;
    try {
      HandlerSpec spec = choose(meta, RpcType.UNARY);
      server = InboundCalls.handle(spec.unary(), Request.of(meta, body), body::release);
    } catch (Throwable t) {
      body.release(); // idempotent: harmless if the handler path released it already
      server = CompletableFuture.failedFuture(t);
    }
    CompletableFuture<Response> call = server;
    result.whenComplete(
        (r, e) -> {
          if (result.isCancelled()) {
            call.cancel(false);
          }
        });
    call.whenComplete(
        (response, error) ->
            transport.execute(
                () -> {
                  if (error != null) {
                    if (!result.isDone()) {
                      YarpcException wire =
                          transport.transmit(error, "in-memory error response of " + what);
                      if (!result.completeExceptionally(wire)) {
                        YarpcException.releaseResponse(wire);
                      }
                    } else {
                      YarpcException.releaseResponse(error);
                    }
                    return;
                  }
                  if (response == null) {
                    result.completeExceptionally(
                        YarpcException.of(
                            Code.INTERNAL, "handler of %s returned no response", what));
                    return;
                  }
                  if (result.isDone()) {
                    response.body().release();
                    return;
                  }
                  Response received;
                  try {
                    received = transport.transmit(response, "in-memory response body of " + what);
                  } catch (YarpcException e) {
                    result.completeExceptionally(
                        transport.transmit(e, "in-memory error response of " + what));
                    return;
                  }
                  if (!result.complete(received)) {
                    received.body().release();
                  }
                }));
  }

  /**
   * Routes a oneway call: completes {@code ack} once the dispatcher took the call (not when the handler
   * finished); the handler's own outcome is only logged, as in yarpc-go. A call the dispatcher refuses
   * because it is stopping ({@code unavailable}) fails {@code ack}, as the HTTP inbound answers it.
   */
  void serveOneway(RequestMeta meta, Body body, CompletableFuture<Void> ack) {
    if (ack.isDone()) {
      body.release();
      return;
    }
    CompletableFuture<Void> handled;
    try {
      HandlerSpec spec = choose(meta, RpcType.ONEWAY);
      handled = InboundCalls.handle(spec.oneway(), Request.of(meta, body), body::release);
    } catch (Throwable t) {
      body.release();
      ack.completeExceptionally(
          transport.transmit(t, "in-memory oneway error of " + describe(meta)));
      return;
    }
    YarpcException refused = InboundCalls.onewayRefusal(handled);
    if (refused != null) {
      ack.completeExceptionally(
          transport.transmit(refused, "in-memory oneway error of " + describe(meta)));
      return;
    }
    if (handled != null) {
      handled.whenComplete(
          (v, e) -> {
            if (e != null) {
              log.debug("oneway handler of {} failed", describe(meta), e);
            }
          });
    }
    ack.complete(null);
  }

  /** Routes a stream and completes {@code result} with the client's end once the handler runs. */
  void serveStream(InMemoryStream stream, CompletableFuture<ClientStream> result) {
    if (result.isDone()) {
      return;
    }
    HandlerSpec spec;
    try {
      spec = choose(stream.serverMeta(), RpcType.STREAMING);
    } catch (Throwable t) {
      result.completeExceptionally(
          transport.transmitStatus(
              t, "in-memory stream error of " + describe(stream.serverMeta())));
      return;
    }
    streams.add(stream);
    stream.start(spec.streaming(), () -> streams.remove(stream));
    if (!isRunning()) {
      stream.abort(YarpcException.of(Code.UNAVAILABLE, "in-memory inbound was stopped"));
    }
    if (!result.complete(stream.client())) {
      stream.client().cancel();
    }
  }

  private HandlerSpec choose(RequestMeta meta, RpcType type) {
    Router r = router;
    if (r == null || !isRunning()) {
      throw Checks.notRunning("in-memory inbound");
    }
    return InboundCalls.route(r, meta, type, DeadlinePolicy.strict()).spec();
  }

  static String describe(RequestMeta meta) {
    return meta.service() + "::" + meta.procedure();
  }
}
