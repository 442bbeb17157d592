package io.yarpc.peer;

import io.yarpc.peer.internal.Scheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * A {@link Scheduler} whose clock moves only when a test {@linkplain #advance advances} it; due tasks
 * then run on the test's thread, in time order. Thread-safe.
 */
final class ManualScheduler implements Scheduler {
  private static final class Task {
    final long due;
    final Runnable run;
    boolean cancelled;

    Task(long due, Runnable run) {
      this.due = due;
      this.run = run;
    }
  }

  private final List<Task> tasks = new ArrayList<>(); // guarded by this
  private long now = 1_000_000_000L; // guarded by this

  @Override
  public synchronized long nanoTime() {
    return now;
  }

  @Override
  public synchronized Runnable schedule(Runnable task, long delayNanos) {
    Task t = new Task(now + Math.max(0, delayNanos), task);
    tasks.add(t);
    return () -> {
      synchronized (this) {
        t.cancelled = true;
        tasks.remove(t);
      }
    };
  }

  /** Moves the clock on by {@code d}, running every task that falls due, each at its own time. */
  void advance(Duration d) {
    long target;
    synchronized (this) {
      target = now + d.toNanos();
    }
    while (true) {
      Task next;
      synchronized (this) {
        next =
            tasks.stream()
                .filter(t -> t.due <= target)
                .min(Comparator.comparingLong(t -> t.due))
                .orElse(null);
        if (next == null) {
          now = target;
          return;
        }
        tasks.remove(next);
        now = Math.max(now, next.due);
      }
      next.run.run(); // outside the lock, as a timer thread would
    }
  }

  /** Tasks scheduled and neither run nor cancelled. */
  synchronized int pending() {
    return tasks.size();
  }
}
