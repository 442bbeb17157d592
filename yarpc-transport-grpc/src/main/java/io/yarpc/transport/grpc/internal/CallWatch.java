package io.yarpc.transport.grpc.internal;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The inbound's read and write timeouts without a timer per call: every call in flight is in one set
 * (added when it starts, removed when it ends), and one periodic sweep per inbound, on one of the
 * inbound's event loops, asks each whether a phase it is in has run out of time — the request still
 * arriving, or the response not being written. A call keeps its own phase and due time; the sweep only
 * reads them, and a call acts (under its own lock) only when it is due. A timeout therefore fires up to
 * one sweep interval late; the interval is a fraction of the shortest timeout watched.
 *
 * <p>The cost on the normal path is two set operations per call; core's deadline timer stays the only
 * timer a call arms (the transport conformance suite counts them). Thread-safe.
 */
public final class CallWatch {
  private static final Logger log = LoggerFactory.getLogger(CallWatch.class);

  /** A call the sweep looks at. */
  interface Watched {
    /** Acts if a timeout of the call's current phase passed by {@code nowNanos}; quick. */
    void check(long nowNanos);
  }

  private final Set<Watched> calls = ConcurrentHashMap.newKeySet();
  private final long intervalNanos;
  private volatile ScheduledFuture<?> sweep;

  /** A watch that sweeps every {@code intervalNanos} once started. */
  public CallWatch(long intervalNanos) {
    this.intervalNanos = intervalNanos;
  }

  /** The sweep interval for timeouts of which the shortest is {@code shortestNanos}: an eighth of it. */
  public static long intervalFor(long shortestNanos) {
    long min = TimeUnit.MILLISECONDS.toNanos(10);
    long max = TimeUnit.SECONDS.toNanos(1);
    return Math.max(min, Math.min(max, shortestNanos / 8));
  }

  /** Starts sweeping on {@code loop}. */
  public void start(EventExecutor loop) {
    sweep =
        loop.scheduleWithFixedDelay(
            this::sweep, intervalNanos, intervalNanos, TimeUnit.NANOSECONDS);
  }

  /** Stops sweeping and forgets the calls. */
  public void stop() {
    ScheduledFuture<?> s = sweep;
    if (s != null) {
      s.cancel(false);
    }
    calls.clear();
  }

  void add(Watched call) {
    calls.add(call);
  }

  void remove(Watched call) {
    calls.remove(call);
  }

  /** Calls in flight (tests, diagnostics). */
  public int size() {
    return calls.size();
  }

  private void sweep() {
    long now = System.nanoTime();
    for (Watched call : calls) {
      try {
        call.check(now);
      } catch (RuntimeException e) {
        log.warn("timeout check of a gRPC call failed", e); // and the sweep goes on
      }
    }
  }
}
