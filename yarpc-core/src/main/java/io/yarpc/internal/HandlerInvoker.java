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
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
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

  private static final Consumer<Request> RELEASE_REQUEST = r -> r.body().release();
  private static final Consumer<Response> RELEASE_RESPONSE = r -> r.body().release();
  private static final Consumer<Object> NOTHING = x -> {};

  private Handler<Request, Response> unary(
      Handler<Request, Response> handler, Admission admission) {
    return request -> {
      YarpcException refused = refuse(request.meta(), true, admission);
      if (refused != null) {
        request.body().release();
        return CompletableFuture.failedFuture(refused);
      }
      return new Invocation<>(
              this, request.meta(), request, handler, admission, RELEASE_REQUEST, RELEASE_RESPONSE)
          .start(request.meta().deadline());
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
      return new Invocation<>(
              this, request.meta(), request, handler, admission, RELEASE_REQUEST, NOTHING)
          .start(null);
    };
  }

  private Handler<ServerStream, Void> streaming(
      Handler<ServerStream, Void> handler, Admission admission) {
    return stream -> {
      YarpcException refused = refuse(stream.meta(), false, admission);
      if (refused != null) {
        return CompletableFuture.failedFuture(refused);
      }
      return new Invocation<>(this, stream.meta(), stream, handler, admission, NOTHING, NOTHING)
          .start(stream.meta().deadline());
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

  /**
   * One admitted call, and the future its transport gets: the object is the call's result, the task the
   * handler executor runs ({@link #run}), the handler's continuation ({@link #accept}), the body {@link
   * Call#run} runs ({@link #call}) and its deadline timer's target, so that invoking a handler allocates
   * this, the {@link Call} and the timer's task.
   *
   * <p>However the call ends, its deadline timer is cancelled (it has nothing left to do and would keep
   * this reachable until due). A transport that cancels this future (its caller went away) cancels the
   * call.
   */
  private static final class Invocation<I, O> extends CompletableFuture<O>
      implements Runnable, BiConsumer<O, Throwable>, Callable<CompletableFuture<O>> {
    private final HandlerInvoker invoker;
    private final RequestMeta meta;
    private final I input;
    private final Handler<I, O> handler;
    private final Admission admission;
    private final Consumer<? super I> releaseInput;
    private final Consumer<? super O> discard;
    private final Call call;
    private long ttlNanos; // the time the call had when it began, for the timeout message
    private volatile ScheduledFuture<?> timer;

    Invocation(
        HandlerInvoker invoker,
        RequestMeta meta,
        I input,
        Handler<I, O> handler,
        Admission admission,
        Consumer<? super I> releaseInput,
        Consumer<? super O> discard) {
      this.invoker = invoker;
      this.meta = meta;
      this.input = input;
      this.handler = handler;
      this.admission = admission;
      this.releaseInput = releaseInput;
      this.discard = discard;
      this.call = new Call(meta);
    }

    /** Arms the deadline (none when null) and hands the call to its handler. */
    CompletableFuture<O> start(Deadline deadline) {
      invoker.host.track(1);
      if (deadline != null) {
        // a deadline already past (an HTTP Context-TTL-MS of 0) reads "timed out after 0s", not a
        // negative time
        ttlNanos = Math.max(0, deadline.remainingNanos());
        timer = Timers.schedule(Invocation::timedOut, this, ttlNanos);
      }
      if (admission.direct) {
        run();
        return this;
      }
      try {
        invoker.host.executor().execute(this);
      } catch (RejectedExecutionException e) {
        releaseInput.accept(input);
        cancelTimer();
        admission.exit();
        invoker.host.track(-1);
        completeExceptionally(
            YarpcException.withCause(
                    Code.RESOURCE_EXHAUSTED, "handler executor rejected the call", e)
                .withUnprocessed());
      }
      return this;
    }

    /** On the timer thread, at the deadline. */
    private void timedOut() {
      // built only when it fires: formatting it up front was the largest per-call allocation
      YarpcException timeout =
          YarpcException.of(
              Code.DEADLINE_EXCEEDED,
              "call to procedure \"%s\" of service \"%s\" from caller \"%s\" timed out after %s",
              meta.procedure(),
              meta.service(),
              meta.caller(),
              GoDurations.format(Duration.ofNanos(ttlNanos)));
      // complete first: cancelling the call wakes the handler, whose late result must lose the race
      super.completeExceptionally(timeout);
      call.cancel(timeout);
    }

    /** Runs the handler with the call current (on the handler executor, or the inbound's thread). */
    @Override
    public void run() {
      CompletableFuture<O> inner;
      if (call.isCancelled()) {
        inner = CompletableFuture.failedFuture(call.cancellation());
      } else {
        try {
          inner = call.run(this);
        } catch (Throwable t) { // call.run's own failure (a Callable may throw checked exceptions)
          inner = CompletableFuture.failedFuture(t);
        }
      }
      if (inner.isDone()) { // most handlers answer at once: no continuation to allocate
        O value = null;
        Throwable error = null;
        try {
          value = inner.join();
        } catch (CompletionException e) {
          error = e.getCause() != null ? e.getCause() : e;
        } catch (Throwable t) {
          error = t;
        }
        accept(value, error);
      } else {
        inner.whenComplete(this);
      }
    }

    /** The handler's call, with this call current. */
    @Override
    public CompletableFuture<O> call() {
      // the input is released in accept however the handler ends, so nothing to do if it never took
      // it
      return InboundCalls.handle(handler, input, () -> {});
    }

    /** The handler's own future completed. */
    @Override
    public void accept(O value, Throwable error) {
      releaseInput.accept(input);
      cancelTimer();
      boolean taken =
          error == null
              ? super.complete(value)
              : super.completeExceptionally(invoker.toCaller(error, meta, call));
      if (!taken) {
        if (value != null) {
          discard.accept(value);
        } else if (error != null) {
          YarpcException.releaseResponse(error);
        }
      }
      admission.exit();
      invoker.host.track(-1);
    }

    /** The transport's caller went away: the call is cancelled, and its deadline with it. */
    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      return endedOutside(super.cancel(mayInterruptIfRunning));
    }

    @Override
    public boolean completeExceptionally(Throwable error) {
      return endedOutside(super.completeExceptionally(error));
    }

    @Override
    public boolean complete(O value) {
      return endedOutside(super.complete(value));
    }

    /** Ended from outside (this class completes itself through {@code super}'s methods). */
    private boolean endedOutside(boolean ended) {
      if (ended) {
        cancelTimer();
        if (isCancelled()) {
          call.cancel();
        }
      }
      return ended;
    }

    private void cancelTimer() {
      ScheduledFuture<?> t = timer;
      if (t != null) {
        t.cancel(false);
      }
    }
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
