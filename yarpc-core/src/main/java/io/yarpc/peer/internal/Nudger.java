package io.yarpc.peer.internal;

import io.yarpc.internal.Timers;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Runs a task now and then about every {@link #PERIOD_MILLIS} ms (jittered by half) on the shared timer while calls wait for a
 * peer: choosers {@link #start} it when the first call begins to wait and {@link #stop} it when none
 * waits any more, and the task asks their unavailable peers to {@linkplain io.yarpc.peer.Peer#connectNow()
 * connect now}, so a server that comes up is noticed within a period instead of after a reconnect
 * backoff that may have grown to seconds. Thread-safe.
 */
public final class Nudger {
  /** The period, in milliseconds. */
  public static final long PERIOD_MILLIS = 100;

  private final Runnable task;
  private ScheduledFuture<?> next; // guarded by this
  private boolean running; // guarded by this

  /** A nudger running {@code task}, which must not block. */
  public Nudger(Runnable task) {
    this.task = task;
  }

  /** Starts nudging (at once), unless it runs already. */
  public synchronized void start() {
    if (!running) {
      running = true;
      next = Timers.schedule(this::run, 0);
    }
  }

  /** Stops nudging. */
  public synchronized void stop() {
    running = false;
    if (next != null) {
      next.cancel(false);
      next = null;
    }
  }

  private void run() {
    synchronized (this) {
      if (!running) {
        return;
      }
      // jittered (50 to 150 ms), so that many clients waiting for one server do not knock in step
      long period = TimeUnit.MILLISECONDS.toNanos(PERIOD_MILLIS);
      next =
          Timers.schedule(this::run, period / 2 + ThreadLocalRandom.current().nextLong(period + 1));
    }
    try {
      task.run();
    } catch (RuntimeException ignored) {
      // a peer that fails to start connecting is tried again next period
    }
  }
}
