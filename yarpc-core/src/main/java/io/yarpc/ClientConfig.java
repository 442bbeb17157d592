package io.yarpc;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.OutboundInvoker;
import io.yarpc.middleware.Middleware;
import io.yarpc.transport.ClientStream;
import io.yarpc.transport.Handler;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * How clients of one remote service send calls: the caller and service names and the outbounds for that
 * service, wrapped in the one outbound call path every call takes (core's, so no transport repeats it):
 * defaults and inheritance from the current {@link Call} (deadline, cancellation, caller procedure),
 * validation ({@code missing ...}, {@code missing TTL} for unary and oneway calls), the call's deadline —
 * one timer per call, which fails it with {@code deadline-exceeded} {@code client timeout for procedure
 * ...} and cancels the outbound's future — the outbound middleware, then the outbound. Encodings' typed
 * clients are built on it; get one from {@link Dispatcher#clientConfig(String)}, or, without a
 * dispatcher, from {@link #of(String, String, Outbounds)}.
 *
 * <p>Requests with an empty caller or service get this config's names. The outbound owns a request body
 * once called; the caller owns the response body. Thread-safe.
 */
public final class ClientConfig {
  private final String caller;
  private final String service;
  private final Handler<Request, Response> unary;
  private final Handler<Request, Void> oneway;
  private final Handler<RequestMeta, ClientStream> stream;

  ClientConfig(
      String caller,
      String service,
      Handler<Request, Response> unary,
      Handler<Request, Void> oneway,
      Handler<RequestMeta, ClientStream> stream) {
    this.caller = caller;
    this.service = service;
    this.unary = unary;
    this.oneway = oneway;
    this.stream = stream;
  }

  /**
   * A config that calls {@code service} as {@code caller} through {@code outbounds} without a dispatcher,
   * on the same call path as {@link Dispatcher#clientConfig(String)} (without middleware). Starting and
   * stopping the outbounds is the caller's job.
   */
  public static ClientConfig of(String caller, String service, Outbounds outbounds) {
    java.util.Objects.requireNonNull(caller, "caller");
    java.util.Objects.requireNonNull(service, "service");
    return create(
        caller,
        service,
        java.util.Objects.requireNonNull(outbounds, "outbounds"),
        List.of(),
        List.of(),
        List.of());
  }

  /** The config for {@code outbounds} with this outbound middleware (first outermost). */
  static ClientConfig create(
      String caller,
      String service,
      Outbounds outbounds,
      List<Middleware<Request, Response>> unaryMiddleware,
      List<Middleware<Request, Void>> onewayMiddleware,
      List<Middleware<RequestMeta, ClientStream>> streamMiddleware) {
    Handler<Request, Response> unary =
        outbounds.unary() == null
            ? null
            : OutboundInvoker.unary(
                caller, service, outbounds.unary(), outbounds.unary()::call, unaryMiddleware);
    Handler<Request, Void> oneway =
        outbounds.oneway() == null
            ? null
            : OutboundInvoker.oneway(
                caller,
                service,
                outbounds.oneway(),
                outbounds.oneway()::callOneway,
                onewayMiddleware);
    Handler<RequestMeta, ClientStream> stream =
        outbounds.stream() == null
            ? null
            : OutboundInvoker.stream(
                caller,
                service,
                outbounds.stream(),
                outbounds.stream()::callStream,
                streamMiddleware);
    return new ClientConfig(caller, service, unary, oneway, stream);
  }

  /** This process's service name. */
  public String caller() {
    return caller;
  }

  /** The remote service's name. */
  public String service() {
    return service;
  }

  /** Sends a unary call. */
  public CompletableFuture<Response> call(Request request) {
    if (unary == null) {
      request.body().release();
      return missing("unary");
    }
    return unary.handle(request);
  }

  /** Sends a oneway call; completes when the server acknowledged it. */
  public CompletableFuture<Void> callOneway(Request request) {
    if (oneway == null) {
      request.body().release();
      return missing("oneway");
    }
    return oneway.handle(request);
  }

  /** Opens a stream. */
  public CompletableFuture<ClientStream> callStream(RequestMeta meta) {
    if (stream == null) {
      return missing("stream");
    }
    return stream.handle(meta);
  }

  private <T> CompletableFuture<T> missing(String type) {
    return CompletableFuture.failedFuture(
        YarpcException.of(
            Code.UNIMPLEMENTED, "no %s outbound is configured for service \"%s\"", type, service));
  }
}
