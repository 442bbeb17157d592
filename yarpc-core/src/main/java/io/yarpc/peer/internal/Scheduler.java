package io.yarpc.peer.internal;

import io.yarpc.internal.Timers;
import java.util.concurrent.ScheduledFuture;

/**
 * The time and the one-shot timers outlier detection runs on: {@link #SYSTEM} ({@link System#nanoTime()}
 * and the shared {@code yarpc-timer}) in production, a hand-driven clock in tests. Thread-safe.
 */
public interface Scheduler {
  /** {@link System#nanoTime()} and {@link Timers#schedule}. */
  Scheduler SYSTEM =
      new Scheduler() {
        @Override
        public long nanoTime() {
          return System.nanoTime();
        }

        @Override
        public Runnable schedule(Runnable task, long delayNanos) {
          ScheduledFuture<?> timer = Timers.schedule(task, delayNanos);
          return () -> timer.cancel(false);
        }
      };

  /** Now, in nanoseconds from an arbitrary origin (as {@link System#nanoTime()}). */
  long nanoTime();

  /**
   * Runs {@code task} once, {@code delayNanos} from now, on a thread of the scheduler's (never the
   * caller's); returns what cancels it. The task must be quick.
   */
  Runnable schedule(Runnable task, long delayNanos);
}
