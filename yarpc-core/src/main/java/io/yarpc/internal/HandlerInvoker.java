package io.yarpc.internal;

import io.yarpc.Call;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Handler;
import io.yarpc.transport.HandlerSpec;
import io.yarpc.transport.InboundCalls;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.RpcType;
import io.yarpc.transport.ServerStream;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.function.Consumer;

/**
 * Wraps a registered handler (already inside its middleware) with what every inbound call needs, so
 * transports don't each reimplement it:
 *
 * <ul>
 *   <li>unary and oneway calls must have a deadline ({@code invalid-argument} {@code missing TTL});
 *   <li>new calls are refused with {@code unavailable} while the dispatcher drains;
 *   <li>the handler runs on the handler executor (or directly when the procedure is non-blocking), with a
 *       {@link Call} current;
 *   <li>a unary call that outlives its deadline completes with {@code deadline-exceeded} at the deadline
 *       and its call is cancelled; a caller that cancels the returned future cancels the call;
 *   <li>anything thrown that is not a {@link YarpcException} becomes {@code unknown} with yarpc-go's
 *       {@code error for service "S" and procedure "P": ...} message;
 *   <li>the request body is released when the handler's own future completes, and a response that
 *       arrives after the call already ended is released too.
 * </ul>
 */
public final class HandlerInvoker {
  /** What the dispatcher shares with its invokers. */
  public interface Host {
    /** The executor for blocking handlers. */
    Executor executor();

    /** Whether new calls must be refused. */
    boolean isDraining();

    /** Counts a call in (+1) or out (-1). */
    void track(int delta);

    /** The dispatcher's name, for messages. */
    String name();
  }

  private final Host host;

  /** An invoker for one dispatcher. */
  public HandlerInvoker(Host host) {
    this.host = host;
  }

  /** {@code procedure}'s handler with the invocation rules applied. */
  public HandlerSpec wrap(Procedure procedure, HandlerSpec spec) {
    boolean direct = procedure.isNonBlocking();
    switch (spec.type()) {
      case UNARY:
        return HandlerSpec.unary(unary(spec.unary(), direct));
      case ONEWAY:
        return HandlerSpec.oneway(oneway(spec.oneway(), direct));
      default:
        return HandlerSpec.streaming(streaming(spec.streaming(), direct));
    }
  }

  private Handler<Request, Response> unary(Handler<Request, Response> handler, boolean direct) {
    return request -> {
      YarpcException refused = refuse(request.meta(), true);
      if (refused != null) {
        request.body().release();
        return CompletableFuture.failedFuture(refused);
      }
      return invoke(
          request.meta(),
          request,
          handler,
          direct,
          request.meta().deadline(),
          r -> r.body().release(),
          () -> request.body().release());
    };
  }

  private Handler<Request, Void> oneway(Handler<Request, Void> handler, boolean direct) {
    return request -> {
      YarpcException refused = refuse(request.meta(), true);
      if (refused != null) {
        request.body().release();
        return CompletableFuture.failedFuture(refused);
      }
      // A oneway handler runs after the ack, with no deadline (as in yarpc-go).
      return invoke(
          request.meta(), request, handler, direct, null, r -> {}, () -> request.body().release());
    };
  }

  private Handler<ServerStream, Void> streaming(
      Handler<ServerStream, Void> handler, boolean direct) {
    return stream -> {
      YarpcException refused = refuse(stream.meta(), false);
      if (refused != null) {
        return CompletableFuture.failedFuture(refused);
      }
      return invoke(
          stream.meta(), stream, handler, direct, stream.meta().deadline(), r -> {}, () -> {});
    };
  }

  private YarpcException refuse(RequestMeta meta, boolean deadlineRequired) {
    if (host.isDraining()) {
      return YarpcException.of(
          Code.UNAVAILABLE, "dispatcher \"%s\" is stopping and takes no new calls", host.name());
    }
    return deadlineRequired ? InboundCalls.missingDeadline(meta, RpcType.UNARY) : null;
  }

  private <I, O> CompletableFuture<O> invoke(
      RequestMeta meta,
      I input,
      Handler<I, O> handler,
      boolean direct,
      Deadline deadline,
      Consumer<O> discard,
      Runnable releaseInput) {
    Call call = new Call(meta);
    CompletableFuture<O> result = new CompletableFuture<>();
    host.track(1);

    ScheduledFuture<?> timer = null;
    if (deadline != null) {
      Duration ttl = deadline.timeRemaining();
      timer =
          Timers.schedule(
              () -> {
                // built only when it fires: formatting it up front was the largest per-call
                // allocation
                YarpcException timeout =
                    YarpcException.of(
                        Code.DEADLINE_EXCEEDED,
                        "call to procedure \"%s\" of service \"%s\" from caller \"%s\" timed out after %s",
                        meta.procedure(),
                        meta.service(),
                        meta.caller(),
                        GoDurations.format(ttl));
                // complete first: cancelling the call wakes the handler, whose late result must
                // lose the race
                result.completeExceptionally(timeout);
                call.cancel(timeout);
              },
              ttl.toNanos());
    }
    ScheduledFuture<?> deadlineTimer = timer;
    // The transport cancels the returned future when its caller goes away. However the call ends,
    // its deadline timer has nothing left to do (and would keep the call reachable until it was
    // due).
    result.whenComplete(
        (v, e) -> {
          if (deadlineTimer != null) {
            deadlineTimer.cancel(false);
          }
          if (result.isCancelled()) {
            call.cancel();
          }
        });

    Runnable run =
        () -> {
          CompletableFuture<O> inner;
          if (call.isCancelled()) {
            inner = CompletableFuture.failedFuture(call.cancellation());
          } else {
            try {
              // the input is released below however the handler ends, so nothing to do if it never
              // took it
              inner = call.run(() -> InboundCalls.handle(handler, input, () -> {}));
            } catch (
                Throwable t) { // call.run's own failure (a Callable may throw checked exceptions)
              inner = CompletableFuture.failedFuture(t);
            }
          }
          inner.whenComplete(
              (value, error) -> {
                releaseInput.run();
                if (deadlineTimer != null) {
                  deadlineTimer.cancel(false);
                }
                boolean taken =
                    error == null
                        ? result.complete(value)
                        : result.completeExceptionally(toYarpc(error, meta, call));
                if (!taken) {
                  if (value != null) {
                    discard.accept(value);
                  } else if (error != null) {
                    YarpcException.releaseResponse(error);
                  }
                }
                host.track(-1);
              });
        };

    if (direct) {
      run.run();
    } else {
      try {
        host.executor().execute(run);
      } catch (RejectedExecutionException e) {
        releaseInput.run();
        if (deadlineTimer != null) {
          deadlineTimer.cancel(false);
        }
        host.track(-1);
        result.completeExceptionally(
            YarpcException.withCause(
                Code.RESOURCE_EXHAUSTED, "handler executor rejected the call", e));
      }
    }
    return result;
  }

  private static YarpcException toYarpc(Throwable error, RequestMeta meta, Call call) {
    Throwable cause = Futures.unwrap(error);
    if (cause instanceof YarpcException) {
      return (YarpcException) cause;
    }
    if (cause instanceof CancellationException) {
      YarpcException reason = call.cancellation();
      return reason != null
          ? reason
          : YarpcException.of(
              Code.CANCELLED,
              "call to procedure \"%s\" of service \"%s\" from caller \"%s\" was cancelled",
              meta.procedure(),
              meta.service(),
              meta.caller());
    }
    return YarpcException.withCause(
        Code.UNKNOWN,
        String.format(
            "error for service \"%s\" and procedure \"%s\": %s",
            meta.service(), meta.procedure(), YarpcException.describe(cause)),
        cause);
  }
}
