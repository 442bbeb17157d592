package io.yarpc.testing;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.Checks;
import io.yarpc.transport.AbstractLifecycle;
import io.yarpc.transport.Body;
import io.yarpc.transport.ClientStream;
import io.yarpc.transport.OnewayOutbound;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.StreamOutbound;
import io.yarpc.transport.Transport;
import io.yarpc.transport.UnaryOutbound;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The client end of an {@link InMemoryTransport}: sends unary, oneway and stream calls to the inbound
 * running on its transport. Get one from {@link InMemoryTransport#outbound()} (or all three RPC types at
 * once from {@link InMemoryTransport#outbounds()}).
 *
 * <p>Calls fail with {@code unavailable} while the outbound is not running or no inbound runs on the
 * transport. The request body is copied and released at once; the response arrives as a new body that the
 * caller owns. Stopping the outbound fails its streams still open with {@code unavailable}.
 */
public final class InMemoryOutbound extends AbstractLifecycle
    implements UnaryOutbound, OnewayOutbound, StreamOutbound {
  private final InMemoryTransport transport;
  private final Set<InMemoryStream> streams = ConcurrentHashMap.newKeySet();

  InMemoryOutbound(InMemoryTransport transport) {
    this.transport = transport;
  }

  /** The in-memory transport this outbound belongs to. */
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
  protected void doStart() {}

  @Override
  protected void doStop() {
    YarpcException closed = YarpcException.of(Code.UNAVAILABLE, "in-memory outbound was stopped");
    for (InMemoryStream s : streams) {
      s.abort(closed);
    }
    streams.clear();
  }

  /**
   * Sends a unary call: copies and releases the request body, delivers the request on an I/O thread, and
   * completes with a copy of the server's response (or error). Cancelling the future cancels the
   * server's call.
   */
  @Override
  public CompletableFuture<Response> call(Request request) {
    return send(request, "in-memory request body of ", InMemoryInbound::serveUnary);
  }

  /**
   * Sends a oneway call: completes once the server routed the request and invoked its handler (the
   * handler's own outcome never reaches the caller).
   */
  @Override
  public CompletableFuture<Void> callOneway(Request request) {
    return send(request, "in-memory oneway request body of ", InMemoryInbound::serveOneway);
  }

  /** How the server side takes a transmitted request and completes the caller's future. */
  private interface Delivery<T> {
    void serve(
        InMemoryInbound target, RequestMeta serverMeta, Body wire, CompletableFuture<T> result);
  }

  /** Copies and releases the request body, then delivers the copy on an I/O thread. */
  private <T> CompletableFuture<T> send(Request request, String label, Delivery<T> delivery) {
    RequestMeta meta = request.meta();
    InMemoryInbound target;
    Body wire;
    long ttl;
    try {
      target = target();
      ttl = InMemoryTransport.ttl(meta);
      wire = transport.transmit(request.body(), label + InMemoryInbound.describe(meta));
    } catch (YarpcException e) {
      request.body().release();
      return CompletableFuture.failedFuture(e);
    }
    CompletableFuture<T> result = new CompletableFuture<>();
    transport.execute(
        () -> delivery.serve(target, InMemoryTransport.serverMeta(meta, ttl), wire, result));
    return result;
  }

  /**
   * Opens a stream: completes with the client's end once the server routed the call and started its
   * handler, or with the routing error.
   */
  @Override
  public CompletableFuture<ClientStream> callStream(RequestMeta meta) {
    InMemoryInbound target;
    try {
      target = target();
    } catch (YarpcException e) {
      return CompletableFuture.failedFuture(e);
    }
    long ttl = InMemoryTransport.ttl(meta);
    CompletableFuture<ClientStream> result = new CompletableFuture<>();
    transport.execute(
        () -> {
          InMemoryStream[] holder = new InMemoryStream[1];
          InMemoryStream stream =
              new InMemoryStream(
                  transport,
                  meta,
                  InMemoryTransport.serverMeta(meta, ttl),
                  () -> streams.remove(holder[0]));
          holder[0] = stream;
          streams.add(stream);
          target.serveStream(stream, result);
          if (result.isCompletedExceptionally()) {
            streams.remove(stream);
          }
          if (!isRunning()) {
            stream.abort(YarpcException.of(Code.UNAVAILABLE, "in-memory outbound was stopped"));
          }
        });
    return result;
  }

  private InMemoryInbound target() {
    if (!isRunning()) {
      throw Checks.notRunning("in-memory outbound");
    }
    InMemoryInbound target = transport.target();
    if (target == null) {
      throw YarpcException.of(Code.UNAVAILABLE, "no in-memory inbound is running on %s", transport);
    }
    return target;
  }

  @Override
  public String toString() {
    return "InMemoryOutbound{" + transport + "}";
  }
}
