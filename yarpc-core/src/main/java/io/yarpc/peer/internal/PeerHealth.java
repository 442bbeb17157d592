package io.yarpc.peer.internal;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One peer list member's standing under outlier detection: the counts its finished leases keep without
 * the list's lock, and the state the list's {@link OutlierDetector} changes under it. Made by {@link
 * OutlierDetector#track}.
 */
public final class PeerHealth {
  /** Where the member stands. */
  enum State {
    /** In rotation; its outcomes are counted. */
    HEALTHY,
    /** Out of rotation until its ejection ends. */
    EJECTED,
    /** Back in rotation: the next call chosen for it is a probe. */
    PROBATION,
    /** Out of rotation while its probe is in flight. */
    PROBING
  }

  final OutlierDetector detector;
  final Runnable onEjectionEnd; // the list's: ends the ejection under its lock

  // Counted by leases without the list's lock. Approximate under races (a reset may lose an
  // outcome that lands at the same moment), which a detector can afford.
  final AtomicInteger consecutiveFailures = new AtomicInteger();
  final AtomicLong windowStart;
  final AtomicInteger windowCalls = new AtomicInteger();
  final AtomicInteger windowFailures = new AtomicInteger();

  volatile State state = State.HEALTHY; // written under the list's lock

  // guarded by the list's lock
  int ejections; // the multiplier of the base ejection time
  long restoredAt; // when it last left probation healthy
  long ejectedUntil;
  long ejectedFor;
  String why; // what the current ejection followed
  Runnable cancelTimer;

  PeerHealth(OutlierDetector detector, Runnable onEjectionEnd, long now) {
    this.detector = detector;
    this.onEjectionEnd = onEjectionEnd;
    this.windowStart = new AtomicLong(now);
  }

  /**
   * Counts how one of the member's leases ended; true when the list must let its detector decide
   * ({@link OutlierDetector#decideLocked}): the lease was a probe, or the member just tripped a limit.
   * Lock-free and allocation-free.
   */
  public boolean record(LeaseOutcome outcome, boolean probe) {
    if (probe) {
      return true;
    }
    if (outcome == LeaseOutcome.NONE || state != State.HEALTHY) {
      return false;
    }
    OutlierDetector d = detector;
    if (outcome == LeaseOutcome.SUCCESS) {
      if (consecutiveFailures.get() != 0) {
        consecutiveFailures.set(0);
      }
      if (d.failurePercent > 0) {
        count(false);
      }
      return false;
    }
    int failures = consecutiveFailures.incrementAndGet();
    boolean tripped = d.consecutiveFailures > 0 && failures >= d.consecutiveFailures;
    if (d.failurePercent > 0) {
      count(true);
      tripped |= failurePercentReached();
    }
    return tripped;
  }

  /** Whether the member is in rotation as far as outlier detection is concerned (read under the lock). */
  public boolean allowsCalls() {
    State s = state;
    return s == State.HEALTHY || s == State.PROBATION;
  }

  /** Counts a call in the current window, starting a new window once an interval has passed. */
  private void count(boolean failed) {
    long now = detector.scheduler.nanoTime();
    long start = windowStart.get();
    if (now - start >= detector.intervalNanos && windowStart.compareAndSet(start, now)) {
      windowCalls.set(0);
      windowFailures.set(0);
    }
    windowCalls.incrementAndGet();
    if (failed) {
      windowFailures.incrementAndGet();
    }
  }

  boolean failurePercentReached() {
    int calls = windowCalls.get();
    return calls >= detector.minRequests
        && windowFailures.get() * 100L >= (long) detector.failurePercent * calls;
  }

  /** Starts counting afresh: after a restore. */
  void resetCounts(long now) {
    consecutiveFailures.set(0);
    windowStart.set(now);
    windowCalls.set(0);
    windowFailures.set(0);
  }
}
