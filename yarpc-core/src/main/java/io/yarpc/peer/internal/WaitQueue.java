package io.yarpc.peer.internal;

import io.yarpc.errors.YarpcException;
import io.yarpc.internal.Timers;
import io.yarpc.transport.RequestMeta;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.function.Function;

/**
 * The choices of a peer list that wait for a peer: first come, first served, each with a timer that ends
 * its wait, and a {@link Nudger} running while any waits. The list guards the queue with its own lock,
 * given at construction: the {@code ...Locked} methods run while the caller holds it; futures are never
 * completed under it (a {@link Grant} is delivered after the lock is released).
 */
public final class WaitQueue {
  private final Object lock;
  private final Function<Waiter, YarpcException> timedOut;
  private final LinkedHashSet<Waiter> waiters = new LinkedHashSet<>(); // guarded by lock
  private final Nudger nudger;

  /**
   * A queue guarded by {@code lock}; {@code nudge} runs while choices wait (see {@link Nudger}), and
   * {@code timedOut} (called under {@code lock}) words the error of a wait whose timer fired.
   */
  public WaitQueue(Object lock, Runnable nudge, Function<Waiter, YarpcException> timedOut) {
    this.lock = lock;
    this.nudger = new Nudger(nudge);
    this.timedOut = timedOut;
  }

  /**
   * Queues a choice for {@code meta} that began at {@code startNanos} and whose timer fires in {@code
   * timerNanos}; then, outside the lock, the caller must {@link #watch} it.
   */
  public Waiter addLocked(RequestMeta meta, long startNanos, long timerNanos) {
    Waiter w = new Waiter(startNanos, meta);
    waiters.add(w);
    // The timer takes the lock, so it cannot see the waiter before `timeout` is set.
    w.timeout = Timers.schedule(() -> timeOut(w), timerNanos);
    return w;
  }

  /** Starts nudging and abandons the wait when its caller cancels {@code w}'s future. */
  public void watch(Waiter w) {
    nudger.start();
    w.future.whenComplete(
        (lease, error) -> {
          if (error instanceof CancellationException) {
            abandon(w);
          }
        });
  }

  /**
   * Takes the waiting choices off the queue, oldest first, each with a lease from {@code lease} (which
   * runs under the lock, as this method does), until {@code lease} has none to give (null): the rest
   * keep waiting. The caller {@linkplain Grant#deliver delivers} the grants after releasing the lock.
   */
  public List<Grant> serveAllLocked(Function<RequestMeta, CountedLease> lease) {
    List<Grant> grants = new ArrayList<>(waiters.size());
    for (Iterator<Waiter> it = waiters.iterator(); it.hasNext(); ) {
      Waiter w = it.next();
      if (!w.future.isDone()) { // else cancelled by its caller
        CountedLease l = lease.apply(w.meta);
        if (l == null) {
          break;
        }
        w.cancelTimeout();
        grants.add(new Grant(w, l));
      }
      it.remove();
    }
    return grants;
  }

  /** Takes every waiting choice off the queue, for the caller to fail outside the lock. */
  public List<Waiter> drainLocked() {
    List<Waiter> all = new ArrayList<>(waiters);
    waiters.clear();
    return all;
  }

  /** Whether no choice waits. */
  public boolean isEmptyLocked() {
    return waiters.isEmpty();
  }

  /** How many choices wait. */
  public int sizeLocked() {
    return waiters.size();
  }

  /** Stops nudging (the task calls it when nothing waits any more, and the list when it stops). */
  public void stopNudging() {
    nudger.stop();
  }

  private void timeOut(Waiter w) {
    YarpcException error;
    synchronized (lock) {
      if (!waiters.remove(w)) {
        return; // served, cancelled or failed by stop in the meantime
      }
      error = timedOut.apply(w);
    }
    w.future.completeExceptionally(error);
  }

  private void abandon(Waiter w) {
    synchronized (lock) {
      waiters.remove(w);
    }
    w.cancelTimeout();
  }

  /** A lease chosen for a waiting choice under the lock, delivered after it. */
  public static final class Grant {
    private final Waiter waiter;
    private final CountedLease lease;

    Grant(Waiter waiter, CountedLease lease) {
      this.waiter = waiter;
      this.lease = lease;
    }

    /** Completes the choice with the lease, or finishes the lease when the caller gave up meanwhile. */
    public void deliver() {
      if (!waiter.future.complete(lease)) {
        lease.abandon(); // cancelled meanwhile: give the pending count back
      }
    }
  }
}
