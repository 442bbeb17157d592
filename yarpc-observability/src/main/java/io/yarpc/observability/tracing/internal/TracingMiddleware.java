package io.yarpc.observability.tracing.internal;

import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.yarpc.Call;
import io.yarpc.middleware.Middleware;
import io.yarpc.transport.ClientStream;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Handler;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.ServerStream;
import java.util.concurrent.CompletableFuture;

/**
 * The six tracing middleware, all made from one {@link CallTracer}:
 *
 * <ul>
 *   <li>inbound (unary, oneway, stream): starts a server span, child of the context in the request's
 *       propagation headers; makes it current while the rest of the chain and the handler run on this
 *       thread; ends it when the handler's future completes, or earlier when the call is cancelled (its
 *       deadline passed, the caller went away);
 *   <li>outbound (unary, oneway, stream): starts a client span, child of the current context; replaces the
 *       request's propagation headers with its context; makes it current while the rest of the outbound
 *       chain runs on this thread; ends it when the call's future completes or, for a stream, when the
 *       stream ends (end of stream received, a failure, or {@link ClientStream#cancel()}).
 * </ul>
 *
 * A call that is not sampled still has its context current and propagated (so the next hop keeps the
 * decision), but nothing waits for its end.
 */
public final class TracingMiddleware {
  private TracingMiddleware() {}

  static final String UNARY = "unary";
  static final String ONEWAY = "oneway";
  static final String STREAMING = "streaming";

  /** Server spans of unary calls. */
  public static Middleware<Request, Response> unaryInbound(CallTracer tracer) {
    return (request, next) -> inbound(tracer, request.meta(), UNARY, next, request);
  }

  /** Server spans of oneway calls (they run after the ack, as long as the handler does). */
  public static Middleware<Request, Void> onewayInbound(CallTracer tracer) {
    return (request, next) -> inbound(tracer, request.meta(), ONEWAY, next, request);
  }

  /** Server spans of streams, from the stream's start to the handler's end. */
  public static Middleware<ServerStream, Void> streamInbound(CallTracer tracer) {
    return (stream, next) -> inbound(tracer, stream.meta(), STREAMING, next, stream);
  }

  /** Client spans of unary calls, until the response (or failure). */
  public static Middleware<Request, Response> unaryOutbound(CallTracer tracer) {
    return (request, next) -> {
      TracedCall traced = tracer.startClient(request.meta(), UNARY);
      RequestMeta meta = tracer.inject(request.meta(), traced.context);
      CompletableFuture<Response> f = proceed(traced.context, next, request.withMeta(meta));
      endWith(traced, f, meta.deadline());
      return f;
    };
  }

  /** Client spans of oneway calls, until the server's ack. */
  public static Middleware<Request, Void> onewayOutbound(CallTracer tracer) {
    return (request, next) -> {
      TracedCall traced = tracer.startClient(request.meta(), ONEWAY);
      RequestMeta meta = tracer.inject(request.meta(), traced.context);
      CompletableFuture<Void> f = proceed(traced.context, next, request.withMeta(meta));
      endWith(traced, f, meta.deadline());
      return f;
    };
  }

  /** Client spans of streams, until the stream ends; the stream handed back is a traced wrapper. */
  public static Middleware<RequestMeta, ClientStream> streamOutbound(CallTracer tracer) {
    return (requestMeta, next) -> {
      TracedCall traced = tracer.startClient(requestMeta, STREAMING);
      RequestMeta meta = tracer.inject(requestMeta, traced.context);
      CompletableFuture<ClientStream> f = proceed(traced.context, next, meta);
      if (f == null || !traced.span.isRecording()) {
        return f;
      }
      CompletableFuture<ClientStream> result = new CompletableFuture<>();
      f.whenComplete(
          (stream, error) -> {
            if (error != null) {
              traced.end(null, error, meta.deadline());
              result.completeExceptionally(error);
              return;
            }
            ClientStream wrapped = new TracedClientStream(stream, traced);
            if (!result.complete(wrapped)) {
              wrapped.cancel(); // the caller gave up while the stream was opening
            }
          });
      result.whenComplete(
          (stream, error) -> {
            if (result.isCancelled()) {
              f.cancel(false);
            }
          });
      return result;
    };
  }

  private static <I, O> CompletableFuture<O> inbound(
      CallTracer tracer, RequestMeta meta, String rpcType, Handler<I, O> next, I input) {
    TracedCall traced = tracer.startServer(meta, rpcType);
    if (!traced.span.isRecording()) {
      return proceed(traced.context, next, input);
    }
    // listen before the handler runs: a blocking handler may still be running when the call ends
    Call call = Call.current();
    AutoCloseable onCancel =
        call == null ? null : call.onCancel(() -> traced.end(null, call.cancellation(), null));
    CompletableFuture<O> f = proceed(traced.context, next, input);
    if (f == null) {
      closeQuietly(onCancel);
      return null;
    }
    f.whenComplete(
        (value, error) -> {
          traced.end(value, error, null);
          closeQuietly(onCancel);
        });
    return f;
  }

  private static void closeQuietly(AutoCloseable registration) {
    if (registration != null) {
      try {
        registration.close();
      } catch (Exception ignored) {
        // removing a listener cannot fail
      }
    }
  }

  /** Calls {@code next} with {@code context} current on this thread; a throw becomes a failed future. */
  private static <I, O> CompletableFuture<O> proceed(Context context, Handler<I, O> next, I input) {
    try (Scope ignored = context.makeCurrent()) {
      return next.handle(input);
    } catch (Throwable t) {
      return CompletableFuture.failedFuture(t);
    }
  }

  private static void endWith(TracedCall traced, CompletableFuture<?> f, Deadline deadline) {
    if (f != null && traced.span.isRecording()) {
      f.whenComplete((value, error) -> traced.end(value, error, deadline));
    }
  }
}
