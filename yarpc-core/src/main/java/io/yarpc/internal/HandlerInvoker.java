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
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Wraps a registered handler (already inside its middleware) with what every inbound call needs, so
 * transports don't each reimplement it:
 *
 * <ul>
 *   <li>unary and oneway calls must have a deadline ({@code invalid-argument} {@code missing TTL});
 *   <li>new calls are refused with {@code unavailable} while the dispatcher drains;
 *   <li>the errors of calls refused before their handler (draining, a procedure's limit, a full executor)
 *       are {@linkplain YarpcException#unprocessed() unprocessed}: inbounds answer them with their
 *       protocol's refusal, and callers may retry them;
 *   <li>the handler runs on the handler executor (or directly when the procedure is non-blocking), with a
 *       {@link Call} current;
 *   <li>a unary call that outlives its deadline completes with {@code deadline-exceeded} at the deadline
 *       and its call is cancelled; a caller that cancels the returned future cancels the call;
 *   <li>a procedure's own {@linkplain Procedure#maxConcurrentCalls() concurrency limit} refuses calls beyond
 *       it with {@code resource-exhausted};
 *   <li>anything thrown that is not a {@link YarpcException} becomes {@code unknown} with yarpc-go's
 *       {@code error for service "S" and procedure "P": ...} message; such an unexpected exception is
 *       logged, and its text kept from the caller unless the dispatcher is verbose ({@link
 *       YarpcException#redacted()});
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

    /** Whether callers may read the text of a handler's unexpected exception. */
    boolean verboseErrors();
  }

  private static final Logger log = LoggerFactory.getLogger(HandlerInvoker.class);

  private static final long LOG_INTERVAL_NANOS = 1_000_000_000L;

  private final Host host;
  private final AtomicLong nextUnexpectedLog = new AtomicLong(System.nanoTime());
  private final AtomicLong unloggedUnexpected = new AtomicLong();

  /** An invoker for one dispatcher. */
  public HandlerInvoker(Host host) {
    this.host = host;
  }

  /**
   * {@code procedure}'s handler with the invocation rules applied. {@code inFlight} counts the calls of
   * this handler being handled (admitted, and whose result is not complete yet); the procedure's
   * concurrency limit applies to it.
   */
  public HandlerSpec wrap(Procedure procedure, HandlerSpec spec, AtomicInteger inFlight) {
    Admission admission =
        new Admission(procedure.isNonBlocking(), procedure.maxConcurrentCalls(), inFlight);
    switch (spec.type()) {
      case UNARY:
        return HandlerSpec.unary(unary(spec.unary(), admission));
      case ONEWAY:
        return HandlerSpec.oneway(oneway(spec.oneway(), admission));
      default:
        return HandlerSpec.streaming(streaming(spec.streaming(), admission));
    }
  }

  /** How one procedure's calls are let in: on which thread, and how many at once. */
  private static final class Admission {
    final boolean direct;
    final int max; // 0: no limit of the procedure's own
    final AtomicInteger inFlight; // counted with or without a limit: introspection reads it

    Admission(boolean direct, int max, AtomicInteger inFlight) {
      this.direct = direct;
      this.max = max;
      this.inFlight = inFlight;
    }

    /** Takes a place; false (and nothing taken) when the procedure is at its limit. */
    boolean enter() {
      if (inFlight.incrementAndGet() > max && max != 0) {
        inFlight.decrementAndGet();
        return false;
      }
      return true;
    }

    void exit() {
      inFlight.decrementAndGet();
    }
  }

  private Handler<Request, Response> unary(
      Handler<Request, Response> handler, Admission admission) {
    return request -> {
      YarpcException refused = refuse(request.meta(), true, admission);
      if (refused != null) {
        request.body().release();
        return CompletableFuture.failedFuture(refused);
      }
      return invoke(
          request.meta(),
          request,
          handler,
          admission,
          request.meta().deadline(),
          r -> r.body().release(),
          () -> request.body().release());
    };
  }

  private Handler<Request, Void> oneway(Handler<Request, Void> handler, Admission admission) {
    return request -> {
      YarpcException refused = refuse(request.meta(), true, admission);
      if (refused != null) {
        request.body().release();
        return CompletableFuture.failedFuture(refused);
      }
      // A oneway handler runs after the ack, with no deadline (as in yarpc-go).
      return invoke(
          request.meta(),
          request,
          handler,
          admission,
          null,
          r -> {},
          () -> request.body().release());
    };
  }

  private Handler<ServerStream, Void> streaming(
      Handler<ServerStream, Void> handler, Admission admission) {
    return stream -> {
      YarpcException refused = refuse(stream.meta(), false, admission);
      if (refused != null) {
        return CompletableFuture.failedFuture(refused);
      }
      return invoke(
          stream.meta(), stream, handler, admission, stream.meta().deadline(), r -> {}, () -> {});
    };
  }

  /** Why a call may not begin, or null when it may (and then it holds a place in {@code admission}). */
  private YarpcException refuse(RequestMeta meta, boolean deadlineRequired, Admission admission) {
    if (host.isDraining()) {
      return YarpcException.of(
              Code.UNAVAILABLE, "dispatcher \"%s\" is stopping and takes no new calls", host.name())
          .withUnprocessed();
    }
    YarpcException missing =
        deadlineRequired ? InboundCalls.missingDeadline(meta, RpcType.UNARY) : null;
    if (missing != null) {
      return missing;
    }
    if (!admission.enter()) {
      return YarpcException.of(
              Code.RESOURCE_EXHAUSTED,
              "procedure \"%s\" of service \"%s\" is at its limit of %d concurrent calls; try again later",
              meta.procedure(),
              meta.service(),
              admission.max)
          .withUnprocessed();
    }
    return null;
  }

  private <I, O> CompletableFuture<O> invoke(
      RequestMeta meta,
      I input,
      Handler<I, O> handler,
      Admission admission,
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
                        : result.completeExceptionally(toCaller(error, meta, call));
                if (!taken) {
                  if (value != null) {
                    discard.accept(value);
                  } else if (error != null) {
                    YarpcException.releaseResponse(error);
                  }
                }
                admission.exit();
                host.track(-1);
              });
        };

    if (admission.direct) {
      run.run();
    } else {
      try {
        host.executor().execute(run);
      } catch (RejectedExecutionException e) {
        releaseInput.run();
        if (deadlineTimer != null) {
          deadlineTimer.cancel(false);
        }
        admission.exit();
        host.track(-1);
        result.completeExceptionally(
            YarpcException.withCause(
                    Code.RESOURCE_EXHAUSTED, "handler executor rejected the call", e)
                .withUnprocessed());
      }
    }
    return result;
  }

  /**
   * The error the caller gets: a handler's unexpected exception is logged here, once, and its text kept
   * from the caller unless the dispatcher is verbose.
   */
  private YarpcException toCaller(Throwable error, RequestMeta meta, Call call) {
    YarpcException e = toYarpc(error, meta, call);
    if (!e.hasUnexpectedCauseText()) {
      return e;
    }
    logUnexpected(meta, e.getCause() != null ? e.getCause() : e);
    return host.verboseErrors() ? e : e.redacted();
  }

  /**
   * Logs a handler's unexpected exception with its stack trace, at most once a second per dispatcher (a
   * caller who can trigger a bug must not be able to flood the log); the others in between are counted
   * and the count told with the next one logged.
   */
  private void logUnexpected(RequestMeta meta, Throwable cause) {
    long now = System.nanoTime();
    long next = nextUnexpectedLog.get();
    if (now - next < 0 || !nextUnexpectedLog.compareAndSet(next, now + LOG_INTERVAL_NANOS)) {
      unloggedUnexpected.incrementAndGet();
      return;
    }
    long skipped = unloggedUnexpected.getAndSet(0);
    log.warn(
        "procedure \"{}\" of service \"{}\" failed for caller \"{}\" with an unexpected exception{}",
        meta.procedure(),
        meta.service(),
        meta.caller(),
        skipped == 0 ? "" : " (" + skipped + " more not logged in the second before)",
        cause);
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
    return YarpcException.wrapping(
        Code.UNKNOWN,
        String.format(
            "error for service \"%s\" and procedure \"%s\"", meta.service(), meta.procedure()),
        cause);
  }
}
