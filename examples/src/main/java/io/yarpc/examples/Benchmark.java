package io.yarpc.examples;

import io.yarpc.ClientConfig;
import io.yarpc.errors.ApplicationErrorMeta;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.examples.FlagSet.Flag;
import io.yarpc.transport.Response;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;

/**
 * {@code call}'s benchmark mode, as yab's: the same call made again and again by {@code --concurrency}
 * workers, each with one call in flight, until {@code --requests} calls were made or {@code --duration}
 * passed (whichever comes first), at most {@code --rps} calls started per second. {@code --warmup} calls
 * come first and are left out of the results. {@link Result} has what happened: calls, errors by code,
 * latency percentiles of the successful calls.
 */
final class Benchmark {
  static final List<Flag> FLAGS =
      List.of(
          new Flag("requests", "N", null, "make N calls (benchmark mode)"),
          new Flag("duration", "DURATION", null, "make calls for this long (benchmark mode)"),
          new Flag("concurrency", "C", "1", "calls in flight at once"),
          new Flag("rps", "R", "0: unlimited", "start at most R calls a second, spread evenly"),
          new Flag("warmup", "N", "0", "calls made first and left out of the results"));

  /** The most workers {@code --concurrency} may ask for. */
  static final int MAX_CONCURRENCY = 10_000;

  /**
   * What to run.
   *
   * @param requests how many calls; 0: as many as fit in {@code duration}
   * @param duration how long to make calls; null: until {@code requests} calls were made
   * @param concurrency how many calls are in flight at once (one per worker thread)
   * @param rps the most calls started per second; 0: no limit
   * @param warmup calls made before, and left out of the results
   */
  record Plan(long requests, Duration duration, int concurrency, long rps, long warmup) {
    /**
     * The plan of the flags, or null when neither {@code --requests} nor {@code --duration} asks for a
     * benchmark.
     */
    static Plan parse(Flags flags) throws Flags.UsageException {
      if (!flags.has("requests") && !flags.has("duration")) {
        for (Flag f : FLAGS) {
          if (flags.has(f.name())) {
            throw new Flags.UsageException(
                "--" + f.name() + " is for benchmark mode: add --requests N or --duration D");
          }
        }
        return null;
      }
      return new Plan(
          flags.atLeast("requests", 1, 0),
          flags.has("duration") ? Durations.parse("duration", flags.get("duration", null)) : null,
          (int) flags.number("concurrency", 1, MAX_CONCURRENCY, 1),
          flags.atLeast("rps", 0, 0),
          flags.atLeast("warmup", 0, 0));
    }
  }

  /**
   * What a run did.
   *
   * @param calls the calls made
   * @param errors the failed calls by error code ({@code deadline-exceeded}), in code order
   * @param latency the latencies of the successful calls, in nanoseconds
   * @param elapsedNanos from the first call's start to the last one's end
   */
  record Result(long calls, Map<String, Long> errors, Histogram latency, long elapsedNanos) {
    /** The failed calls. */
    long errorCount() {
      return errors.values().stream().mapToLong(Long::longValue).sum();
    }

    /** Calls per second over the run. */
    double callsPerSecond() {
      return elapsedNanos == 0 ? 0 : calls * 1e9 / elapsedNanos;
    }
  }

  private Benchmark() {}

  /**
   * Makes the plan's warm-up calls, runs {@code beforeMeasuring}, then the plan's calls; returns what the
   * latter did. Blocks until every call has ended.
   */
  static Result run(ClientConfig client, CallRequest request, Plan plan, Runnable beforeMeasuring)
      throws InterruptedException {
    if (plan.warmup() > 0) {
      run(client, request, new Plan(plan.warmup(), null, plan.concurrency(), 0, 0));
    }
    beforeMeasuring.run();
    return run(client, request, plan);
  }

  private static Result run(ClientConfig client, CallRequest request, Plan plan)
      throws InterruptedException {
    long start = System.nanoTime();
    Long end = plan.duration() == null ? null : start + plan.duration().toNanos();
    AtomicLong budget = new AtomicLong(plan.requests() == 0 ? Long.MAX_VALUE : plan.requests());
    Pacer pacer = plan.rps() == 0 ? null : new Pacer(plan.rps(), start);
    List<Worker> workers = new ArrayList<>();
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < plan.concurrency(); i++) {
      Worker w = new Worker(client, request, budget, pacer, end);
      Thread t = new Thread(w, "yarpc-call-benchmark-" + i);
      t.setDaemon(true);
      workers.add(w);
      threads.add(t);
      t.start();
    }
    try {
      for (Thread t : threads) {
        t.join();
      }
    } catch (InterruptedException e) {
      threads.forEach(Thread::interrupt);
      throw e;
    }
    long elapsed = System.nanoTime() - start;
    Histogram latency = new Histogram(3);
    Map<String, Long> errors = new TreeMap<>();
    long calls = 0;
    for (Worker w : workers) {
      calls += w.calls;
      latency.add(w.latency);
      w.errors.forEach((code, n) -> errors.merge(code, n, Long::sum));
    }
    return new Result(calls, errors, latency, elapsed);
  }

  /** One worker: one call in flight at a time, while the budget, the time and the pacer allow. */
  private static final class Worker implements Runnable {
    private final ClientConfig client;
    private final CallRequest request;
    private final AtomicLong budget;
    private final Pacer pacer;
    private final Long end; // System.nanoTime() when calls stop starting; null: no end
    // written by the worker's thread, read after it is joined
    final Histogram latency = new Histogram(3);
    final Map<String, Long> errors = new TreeMap<>();
    long calls;

    Worker(ClientConfig client, CallRequest request, AtomicLong budget, Pacer pacer, Long end) {
      this.client = client;
      this.request = request;
      this.budget = budget;
      this.pacer = pacer;
      this.end = end;
    }

    @Override
    public void run() {
      while (budget.getAndDecrement() > 0 && !Thread.currentThread().isInterrupted()) {
        if (pacer != null && !pacer.awaitTurn(end)) {
          return;
        }
        long started = System.nanoTime();
        if (end != null && started - end >= 0) {
          return;
        }
        String error = call();
        calls++;
        if (error == null) {
          latency.recordValue(System.nanoTime() - started);
        } else {
          errors.merge(error, 1L, Long::sum);
        }
      }
    }

    /** Makes one call; returns null on success, else the error's code. */
    private String call() {
      Response response;
      try {
        response = client.call(request.newRequest()).join();
      } catch (CompletionException | CancellationException e) {
        YarpcException error = YarpcException.from(e);
        if (error.response() != null) {
          error.response().body().release();
        }
        return error.code().wireName();
      }
      try {
        if (response.isApplicationError()) {
          ApplicationErrorMeta meta = response.applicationErrorMeta();
          return (meta.code() == null ? Code.UNKNOWN : meta.code()).wireName();
        }
        return null;
      } finally {
        response.body().release();
      }
    }
  }

  /**
   * Spreads call starts evenly at a rate: each turn is one interval after the previous one, or now when
   * the workers fell behind (no burst to catch up). Thread-safe.
   */
  private static final class Pacer {
    private final long intervalNanos;
    private long next; // guarded by this

    Pacer(long perSecond, long start) {
      this.intervalNanos = Math.max(1, 1_000_000_000L / perSecond);
      this.next = start;
    }

    /** Waits for this worker's turn; false when it would come at or after {@code end} (null: never). */
    boolean awaitTurn(Long end) {
      long turn;
      synchronized (this) {
        long now = System.nanoTime();
        turn = next - now > 0 ? next : now;
        next = turn + intervalNanos;
      }
      if (end != null && turn - end >= 0) {
        return false;
      }
      for (long wait = turn - System.nanoTime(); wait > 0; wait = turn - System.nanoTime()) {
        LockSupport.parkNanos(wait);
        if (Thread.currentThread().isInterrupted()) {
          return false;
        }
      }
      return true;
    }
  }
}
