package io.yarpc;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.ClientStream;
import io.yarpc.transport.Handler;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.util.concurrent.CompletableFuture;

/**
 * How clients of one remote service send calls: the caller and service names and the dispatcher's
 * outbounds for that service, wrapped in validation, deadline and cancellation inheritance from the
 * current {@link Call}, and the outbound middleware. Encodings' typed clients are built on it; get one
 * from {@link Dispatcher#clientConfig(String)}.
 *
 * <p>Requests with an empty caller or service get this config's names. The outbound owns a request body
 * once called; the caller owns the response body.
 */
public final class ClientConfig {
  private final String caller;
  private final String service;
  private final Handler<Request, Response> unary;
  private final Handler<Request, Void> oneway;
  private final Handler<RequestMeta, ClientStream> stream;

  ClientConfig(String caller, String service, Handler<Request, Response> unary,
      Handler<Request, Void> oneway, Handler<RequestMeta, ClientStream> stream) {
    this.caller = caller;
    this.service = service;
    this.unary = unary;
    this.oneway = oneway;
    this.stream = stream;
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
    return CompletableFuture.failedFuture(YarpcException.of(Code.UNIMPLEMENTED,
        "no %s outbound is configured for service \"%s\"", type, service));
  }
}
