package io.yarpc.peer.internal;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.Futures;
import io.yarpc.internal.GoDurations;
import io.yarpc.peer.OutlierDetection;
import io.yarpc.peer.internal.PeerHealth.State;
import java.time.Duration;

/**
 * Outlier detection for one peer list ({@link OutlierDetection} says what it does): the settings, the
 * clock, and the decisions that move a member between healthy, ejected and on probation. The list ({@link
 * io.yarpc.peer.AbstractPeerList}) makes one when the option is set, gives each member a {@link
 * PeerHealth} ({@link #track}), and calls the {@code ...Locked} methods under its lock; each returns
 * whether the member's standing changed, after which the list puts the member in or out of rotation as
 * {@link PeerHealth#allowsCalls()} says. Nothing here blocks or calls out of the list, except the one
 * timer an ejection schedules, which calls the member's {@code onEjectionEnd} later on the timer thread.
 */
public final class OutlierDetector {
  private static final int MAX_REASON_TEXT = 200;

  final Scheduler scheduler;
  final int consecutiveFailures;
  final int failurePercent;
  final int minRequests;
  final long intervalNanos;
  private final long baseNanos;
  private final long maxNanos;
  private final int maxEjectionPercent;
  private int heldOut; // guarded by the list's lock: members ejected or on probation

  /** A detector with {@code settings}, running on {@code scheduler}. */
  public OutlierDetector(OutlierDetection settings, Scheduler scheduler) {
    this.scheduler = scheduler;
    this.consecutiveFailures = settings.consecutiveFailures();
    this.failurePercent = settings.failurePercent();
    this.minRequests = settings.minRequests();
    this.intervalNanos = settings.interval().toNanos();
    this.baseNanos = settings.baseEjectionTime().toNanos();
    this.maxNanos = settings.maxEjectionTime().toNanos();
    this.maxEjectionPercent = settings.maxEjectionPercent();
  }

  /**
   * The standing of a new member; {@code onEjectionEnd} runs on the timer thread when an ejection of
   * the member ends, and must call {@link #endEjectionLocked} under the list's lock.
   */
  public PeerHealth track(Runnable onEjectionEnd) {
    return new PeerHealth(this, onEjectionEnd, scheduler.nanoTime());
  }

  /**
   * A member on probation was chosen: the lease is its probe, and it leaves rotation until the probe
   * ends. Returns whether it was on probation.
   */
  public boolean startProbeLocked(PeerHealth h) {
    if (h.state != State.PROBATION) {
      return false;
    }
    h.state = State.PROBING;
    return true;
  }

  /**
   * Decides after {@link PeerHealth#record} asked to: a probe's outcome restores the member (success),
   * ejects it again for longer (failure) or puts it back on probation (nothing); a healthy member that
   * still trips a limit is ejected, unless the list already holds out its share of {@code members} or
   * the member is the last one in rotation ({@code othersInRotation} false). {@code error} is the
   * lease's, for the ejection's reason.
   */
  public boolean decideLocked(
      PeerHealth h,
      LeaseOutcome outcome,
      boolean probe,
      Throwable error,
      int members,
      boolean othersInRotation) {
    if (probe) {
      if (h.state != State.PROBING) {
        return false;
      }
      long now = scheduler.nanoTime();
      switch (outcome) {
        case SUCCESS:
          heldOut--;
          h.state = State.HEALTHY;
          h.why = null;
          h.restoredAt = now;
          h.resetCounts(now);
          return true;
        case FAILURE:
          eject(h, now, "a probe call failed", error);
          return true;
        default:
          h.state = State.PROBATION;
          return true;
      }
    }
    if (h.state != State.HEALTHY) {
      return false;
    }
    String tripped = tripped(h);
    if (tripped == null
        || !othersInRotation
        || heldOut >= Math.max(1, members * maxEjectionPercent / 100)) {
      return false;
    }
    long now = scheduler.nanoTime();
    // each interval spent in rotation since the last restore takes one ejection off the count
    long spent = h.ejections == 0 ? 0 : (now - h.restoredAt) / intervalNanos;
    h.ejections = (int) Math.max(0, h.ejections - spent);
    heldOut++;
    eject(h, now, tripped, error);
    return true;
  }

  /** The member's ejection time is up: it goes on probation. Returns whether it was ejected. */
  public boolean endEjectionLocked(PeerHealth h) {
    if (h.state != State.EJECTED) {
      return false;
    }
    h.state = State.PROBATION;
    h.cancelTimer = null;
    return true;
  }

  /** The member left the list (removed, or the list stopped): it no longer counts or waits. */
  public void forgetLocked(PeerHealth h) {
    if (h.state != State.HEALTHY) {
      heldOut--;
      h.state = State.HEALTHY;
    }
    if (h.cancelTimer != null) {
      h.cancelTimer.run();
      h.cancelTimer = null;
    }
  }

  /**
   * Why the member is out of rotation, for introspection: {@code ejected for 30s after 5 consecutive
   * failures (last: unavailable: ...); on probation in 12s}, or that its probe is in flight; null when
   * outlier detection keeps it in rotation.
   */
  public String describeLocked(PeerHealth h) {
    if (h.state == State.PROBING) {
      return "on probation after an ejection: a probe call is in flight";
    }
    if (h.state != State.EJECTED) {
      return null;
    }
    long left = Math.max(0, h.ejectedUntil - scheduler.nanoTime());
    return "ejected for "
        + format(h.ejectedFor)
        + " after "
        + h.why
        + "; on probation in "
        + format(left);
  }

  /** How many members are ejected or on probation now. */
  public int heldOutLocked() {
    return heldOut;
  }

  /** What a healthy member tripped ({@code 5 consecutive failures}), or null when nothing any more. */
  private String tripped(PeerHealth h) {
    int failures = h.consecutiveFailures.get();
    if (consecutiveFailures > 0 && failures >= consecutiveFailures) {
      return failures + " consecutive failures";
    }
    if (failurePercent > 0 && h.failurePercentReached()) {
      return h.windowFailures.get()
          + " of "
          + h.windowCalls.get()
          + " calls failed within "
          + format(intervalNanos);
    }
    return null;
  }

  private void eject(PeerHealth h, long now, String tripped, Throwable error) {
    if (h.ejections < Integer.MAX_VALUE) {
      h.ejections++;
    }
    long time = h.ejections > maxNanos / baseNanos ? maxNanos : baseNanos * h.ejections;
    h.state = State.EJECTED;
    h.ejectedFor = Math.min(time, maxNanos);
    h.ejectedUntil = now + h.ejectedFor;
    h.why = tripped + " (last: " + describe(error) + ")";
    h.cancelTimer = scheduler.schedule(h.onEjectionEnd, h.ejectedFor);
  }

  /** {@code unavailable: connection refused}, shortened; a cancellation here is a passed deadline. */
  private static String describe(Throwable error) {
    if (error == null) {
      return "unknown";
    }
    Code code = LeaseOutcome.code(error);
    if (code == Code.CANCELLED) {
      return Code.DEADLINE_EXCEEDED.wireName() + ": the call's deadline passed before an answer";
    }
    Throwable root = Futures.unwrap(error);
    String message =
        root instanceof YarpcException ? root.getMessage() : YarpcException.describe(root);
    String text = message.isEmpty() ? code.wireName() : code.wireName() + ": " + message;
    return text.length() <= MAX_REASON_TEXT ? text : text.substring(0, MAX_REASON_TEXT) + "...";
  }

  private static String format(long nanos) {
    // whole milliseconds: an ejection's length is a multiple of its base, the time left need not be
    return GoDurations.format(Duration.ofMillis((nanos + 500_000) / 1_000_000));
  }
}
