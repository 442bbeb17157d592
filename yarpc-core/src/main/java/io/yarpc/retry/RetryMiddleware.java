package io.yarpc.retry;

import static java.util.Objects.requireNonNull;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.Checks;
import io.yarpc.internal.DaemonThreads;
import io.yarpc.internal.GoDurations;
import io.yarpc.internal.Timers;
import io.yarpc.middleware.Middleware;
import io.yarpc.retry.internal.SharedBody;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Handler;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.time.Duration;
import java.util.Collection;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Outbound middleware that sends a failed unary call again, when that is safe:
 *
 * <ul>
 *   <li>the call provably never reached a handler: its error is {@linkplain YarpcException#unprocessed()
 *       unprocessed} (a connection refused, a request that never left, an HTTP/2 stream refused, a
 *       TChannel {@code busy} or {@code declined}, no peer to choose, a server that refused the call
 *       before its handler). Such a call is retried whatever its procedure and code;
 *   <li>or its procedure is declared {@linkplain Builder#idempotentProcedures idempotent} and it failed
 *       with a {@linkplain Builder#retryableCodes retryable code} (default {@code unavailable}), or its
 *       attempt ran past the {@linkplain Builder#perAttemptTimeout per-attempt timeout}: running its
 *       handler twice does no harm.
 * </ul>
 *
 * Anything else — a non-idempotent call that may have reached its handler, a caller that gave up, an
 * application error (a successful response) — is returned as it is.
 *
 * <p>Each retry waits a {@link Backoff} delay, must be allowed by the {@link RetryBudget} (so that in an
 * outage retries add at most a small fraction to the load), and goes through the rest of the chain and
 * the outbound again, so its peer is chosen again. Every attempt runs within the call's deadline: an
 * attempt's deadline (the one the wire carries) is the earlier of the call's and the per-attempt timeout,
 * so the last attempt gets what is left; a retry whose backoff would end past the deadline is not made,
 * and the call fails with the last attempt's error. Attempts after the first start on the {@linkplain
 * Builder#executor executor} (default: a pool of daemon threads {@code yarpc-retry-N} shared by every
 * retry middleware).
 *
 * <p>The request body is sent by every attempt: each attempt's outbound gets a view of it that it owns
 * and releases as usual, and the body itself is released once, after the call ended and the last view
 * was released. A body read from a stream (not {@linkplain Body#isRepeatable() repeatable}) is read into
 * memory first. The responses and errors of discarded attempts are released here.
 *
 * <pre>{@code
 * RetryMiddleware retries =
 *     RetryMiddleware.builder()
 *         .maxAttempts(3)
 *         .idempotentProcedures("get", "list")
 *         .perAttemptTimeout(Duration.ofMillis(200))
 *         .build();
 * Dispatcher.builder("client").unaryOutboundMiddleware(retries)...
 * }</pre>
 *
 * <p>Put it after (inside) middleware that should see one call per call (metrics, logs), and as the last
 * middleware when a per-attempt timeout is set, so that the attempt it abandons is the transport's own
 * exchange. Thread-safe: one instance serves every call, and shares its budget among them.
 */
public final class RetryMiddleware implements Middleware<Request, Response> {
  private final int maxAttempts;
  private final Backoff backoff;
  private final Duration perAttemptTimeout;
  private final RetryBudget budget;
  private final Set<Code> retryableCodes;
  private final Set<String> idempotentProcedures;
  private final Executor executor;

  private RetryMiddleware(Builder b) {
    this.maxAttempts = b.maxAttempts;
    this.backoff = b.backoff;
    this.perAttemptTimeout = b.perAttemptTimeout;
    this.budget = b.budget != null ? b.budget : RetryBudget.defaults();
    this.retryableCodes = Set.copyOf(b.retryableCodes);
    this.idempotentProcedures = Set.copyOf(b.idempotentProcedures);
    this.executor = b.executor != null ? b.executor : DefaultExecutor.POOL;
  }

  /** A builder with the defaults; see each method. */
  public static Builder builder() {
    return new Builder();
  }

  /** The budget every call of this middleware shares. */
  public RetryBudget budget() {
    return budget;
  }

  @Override
  public CompletableFuture<Response> handle(Request request, Handler<Request, Response> next) {
    if (maxAttempts == 1) {
      return next.handle(request);
    }
    budget.deposit();
    SharedBody body;
    try {
      body = SharedBody.of(request.body());
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(
          YarpcException.withCause(
              Code.INVALID_ARGUMENT,
              String.format(
                  "failed to read the request body for procedure \"%s\" of service \"%s\": %s",
                  request.procedure(), request.service(), YarpcException.describe(e)),
              e));
    }
    RetriedCall call = new RetriedCall(request.meta(), body, next);
    call.send();
    return call.result;
  }

  private boolean retryable(YarpcException error, boolean attemptTimedOut, RequestMeta meta) {
    if (error.unprocessed()) {
      return true;
    }
    return idempotentProcedures.contains(meta.procedure())
        && (attemptTimedOut || retryableCodes.contains(error.code()));
  }

  @Override
  public String toString() {
    return "RetryMiddleware{maxAttempts "
        + maxAttempts
        + ", "
        + backoff
        + (perAttemptTimeout == null ? "" : ", perAttemptTimeout " + perAttemptTimeout)
        + ", "
        + budget
        + ", retryable "
        + retryableCodes
        + ", idempotent "
        + idempotentProcedures
        + (executor == DefaultExecutor.POOL ? "" : ", executor " + executor)
        + "}";
  }

  /**
   * Where retries start by default: threads of their own rather than the timer's (which must stay free to
   * fire every call's deadline) or the common {@code ForkJoinPool} (which an application's parallel
   * streams and async tasks may keep busy, holding retries back for as long). Made on first use.
   */
  private static final class DefaultExecutor {
    static final Executor POOL = DaemonThreads.cachedPool("yarpc-retry-", Integer.MAX_VALUE);
  }

  /** One call and its attempts; one attempt at a time. */
  private final class RetriedCall {
    private final RequestMeta meta;
    private final Deadline deadline; // the call's; null outside a ClientConfig's call path
    private final SharedBody body;
    private final Handler<Request, Response> next;
    private final CompletableFuture<Response> result = new CompletableFuture<>();
    // written before the attempt or timer they describe starts, read after result completes
    private volatile int attempt;
    private volatile CompletableFuture<Response> current;
    private volatile ScheduledFuture<?> pending;

    RetriedCall(RequestMeta meta, SharedBody body, Handler<Request, Response> next) {
      this.meta = meta;
      this.deadline = meta.deadline();
      this.body = body;
      this.next = next;
      result.whenComplete(
          (v, e) -> {
            ScheduledFuture<?> timer = pending;
            if (timer != null) {
              timer.cancel(false);
            }
            CompletableFuture<Response> inFlight = current;
            if (inFlight != null && result.isCancelled()) {
              inFlight.cancel(false);
            }
            body.release();
          });
    }

    /** Starts attempt number {@link #attempt} (from 0), unless the call already ended. */
    void send() {
      Body view = result.isDone() ? null : body.view();
      if (view == null) {
        return;
      }
      int n = attempt;
      RequestMeta attemptMeta = meta;
      Deadline attemptDeadline = null;
      if (perAttemptTimeout != null) {
        Deadline d = Deadline.after(perAttemptTimeout);
        if (deadline == null || d.compareTo(deadline) < 0) {
          attemptDeadline = d;
          attemptMeta = meta.toBuilder().deadline(d).build();
        }
      }
      CompletableFuture<Response> f;
      try {
        f = next.handle(Request.of(attemptMeta, view));
      } catch (Throwable t) {
        f = CompletableFuture.failedFuture(t);
      }
      if (f == null) {
        f =
            CompletableFuture.failedFuture(
                YarpcException.of(Code.INTERNAL, "outbound middleware returned no future"));
      }
      CompletableFuture<Response> attemptFuture = f;
      current = attemptFuture;
      AtomicBoolean timedOut = new AtomicBoolean();
      ScheduledFuture<?> timer =
          attemptDeadline == null
              ? null
              : Timers.schedule(
                  () -> {
                    timedOut.set(true);
                    attemptFuture.cancel(false);
                  },
                  attemptDeadline.remainingNanos());
      if (result.isDone()) {
        attemptFuture.cancel(false); // the call ended while this attempt was starting
      }
      attemptFuture.whenComplete(
          (response, error) -> {
            if (timer != null) {
              timer.cancel(false);
            }
            if (error == null) {
              if (!result.complete(response)) {
                response.body().release();
              }
            } else {
              attemptFailed(n, error, timedOut.get());
            }
          });
    }

    private void attemptFailed(int n, Throwable error, boolean timedOut) {
      YarpcException e = timedOut ? attemptTimeout(n) : YarpcException.from(error);
      if (result.isDone() || !retryable(e, timedOut, meta) || n + 1 >= maxAttempts) {
        fail(e);
        return;
      }
      long delay = backoff.delayNanos(n);
      if ((deadline != null && delay >= deadline.remainingNanos()) || !budget.tryWithdraw()) {
        fail(e); // no time left for another attempt, or no budget
        return;
      }
      YarpcException.releaseResponse(e);
      attempt = n + 1;
      pending = Timers.schedule(this::sendOnExecutor, delay);
      if (result.isDone()) {
        pending.cancel(false);
      }
    }

    /** The backoff ended (timer thread): the next attempt starts on the executor. */
    private void sendOnExecutor() {
      try {
        executor.execute(this::send);
      } catch (RuntimeException e) { // RejectedExecutionException, or whatever a custom one throws
        fail(
            YarpcException.withCause(
                Code.UNAVAILABLE,
                "the retry executor refused attempt "
                    + (attempt + 1)
                    + " of "
                    + meta.service()
                    + "::"
                    + meta.procedure()
                    + ": "
                    + YarpcException.describe(e),
                e));
      }
    }

    private void fail(YarpcException e) {
      if (!result.completeExceptionally(e)) {
        YarpcException.releaseResponse(e);
      }
    }

    private YarpcException attemptTimeout(int n) {
      return YarpcException.of(
          Code.DEADLINE_EXCEEDED,
          "attempt %d of the call to procedure \"%s\" of service \"%s\" timed out after %s (its"
              + " per-attempt timeout)",
          n + 1,
          meta.procedure(),
          meta.service(),
          GoDurations.format(perAttemptTimeout));
    }
  }

  /** Builds a {@link RetryMiddleware}. Not thread-safe. */
  public static final class Builder {
    private int maxAttempts = 3;
    private Backoff backoff = Backoff.exponential(Duration.ofMillis(10), Duration.ofSeconds(1));
    private Duration perAttemptTimeout;
    private RetryBudget budget;
    private final Set<Code> retryableCodes = EnumSet.of(Code.UNAVAILABLE);
    private final Set<String> idempotentProcedures = new HashSet<>();
    private Executor executor;

    private Builder() {}

    /**
     * Attempts a call may make in all, the first included, from 1 (no retries) to 10; default 3.
     */
    public Builder maxAttempts(int attempts) {
      if (attempts < 1 || attempts > 10) {
        throw new IllegalArgumentException("maxAttempts must be from 1 to 10: " + attempts);
      }
      this.maxAttempts = attempts;
      return this;
    }

    /** The delay before each retry; default exponential from 10 ms, capped at 1 s, full jitter. */
    public Builder backoff(Backoff backoff) {
      this.backoff = requireNonNull(backoff, "backoff");
      return this;
    }

    /**
     * How long one attempt may take (never past the call's deadline); an attempt that takes longer is
     * abandoned and, for an idempotent procedure, retried. Default: none, an attempt may use all the time
     * the call has left.
     */
    public Builder perAttemptTimeout(Duration timeout) {
      this.perAttemptTimeout = Checks.positive(timeout, "timeout");
      return this;
    }

    /** The budget the retries of every call draw on; default {@link RetryBudget#defaults()}, one per middleware. */
    public Builder budget(RetryBudget budget) {
      this.budget = requireNonNull(budget, "budget");
      return this;
    }

    /**
     * The codes after which a call of an idempotent procedure is retried (replacing the set); default
     * {@code unavailable}. Unprocessed calls are retried whatever their code.
     *
     * @throws IllegalArgumentException for {@code ok}
     */
    public Builder retryableCodes(Code... codes) {
      return retryableCodes(List.of(codes));
    }

    /** See {@link #retryableCodes(Code...)}. */
    public Builder retryableCodes(Collection<Code> codes) {
      Set<Code> set = EnumSet.noneOf(Code.class);
      for (Code c : codes) {
        if (requireNonNull(c, "code") == Code.OK) {
          throw new IllegalArgumentException("ok is not an error code and cannot be retried");
        }
        set.add(c);
      }
      retryableCodes.clear();
      retryableCodes.addAll(set);
      return this;
    }

    /**
     * Procedures (by name, as in {@link RequestMeta#procedure()}) whose handler may safely run more than
     * once, added to those given before; default none, only unprocessed calls are retried.
     */
    public Builder idempotentProcedures(String... procedures) {
      return idempotentProcedures(List.of(procedures));
    }

    /** See {@link #idempotentProcedures(String...)}. */
    public Builder idempotentProcedures(Collection<String> procedures) {
      for (String p : procedures) {
        if (requireNonNull(p, "procedure").isEmpty()) {
          throw new IllegalArgumentException("procedure names must not be empty");
        }
        idempotentProcedures.add(p);
      }
      return this;
    }

    /**
     * Where attempts after the first start (the first runs on the caller's thread); default a pool of
     * daemon threads {@code yarpc-retry-N} shared by every retry middleware, made when needed. An
     * attempt only starts there: the outbound answers on its own threads. The task is handed over on the
     * shared timer's thread, so the executor must not run it in place (no direct executor): the rest of
     * the chain would run there and hold back every call's timer. An executor that refuses the task (it
     * throws) fails the call with {@code unavailable}.
     */
    public Builder executor(Executor executor) {
      this.executor = requireNonNull(executor, "executor");
      return this;
    }

    /** The middleware. */
    public RetryMiddleware build() {
      return new RetryMiddleware(this);
    }
  }
}
