package io.yarpc.internal;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One shared daemon timer thread for deadlines, grpc context deadlines and peer-choice timeouts; tasks
 * must be quick.
 *
 * <p>Almost every deadline timer is cancelled long before it fires, so cancelling must be cheap. A
 * cancelled timer stays in the queue until a purge every {@value #PURGE_EVERY} schedules (run on the timer
 * thread) instead of being removed at once. Removing it at once would leave the queue empty between two
 * calls made one after the other, and each schedule into an empty queue wakes the timer thread (measured:
 * two such wake-ups per call were most of YARPC's per-call CPU over gRPC at one call in flight). Left
 * queued, the cancelled timer stays at the head and a later deadline never wakes the thread.
 */
public final class Timers {
  /** Schedules between two purges of cancelled timers: bounds what cancelled timers keep reachable. */
  static final int PURGE_EVERY = 4096;

  private static final DeadlineScheduler TIMER = new DeadlineScheduler();

  private Timers() {}

  /** Runs {@code task} after {@code nanos} nanoseconds (at once when not positive). */
  public static ScheduledFuture<?> schedule(Runnable task, long nanos) {
    return TIMER.schedule(task, Math.max(0, nanos), TimeUnit.NANOSECONDS);
  }

  /**
   * The timer as an executor, for libraries that take one (grpc's {@code Context.withDeadline}); the same
   * thread and purge rule as {@link #schedule}. Shutting it down is refused.
   */
  public static ScheduledExecutorService scheduler() {
    return TIMER;
  }

  /** Timers queued, cancelled or not (for tests). */
  static int queued() {
    return TIMER.getQueue().size();
  }

  /** The shared timer: purges cancelled tasks every {@value #PURGE_EVERY} schedules. */
  private static final class DeadlineScheduler extends ScheduledThreadPoolExecutor {
    private final AtomicInteger scheduled = new AtomicInteger();

    DeadlineScheduler() {
      super(1, r -> {
        Thread t = Executors.defaultThreadFactory().newThread(r);
        t.setName("yarpc-timer");
        t.setDaemon(true);
        return t;
      });
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
      ScheduledFuture<?> future = super.schedule(command, delay, unit);
      if ((scheduled.incrementAndGet() & (PURGE_EVERY - 1)) == 0) {
        super.schedule(this::purge, 0, TimeUnit.NANOSECONDS);
      }
      return future;
    }

    @Override
    public void shutdown() {
      throw new UnsupportedOperationException("the shared YARPC timer cannot be shut down");
    }

    @Override
    public java.util.List<Runnable> shutdownNow() {
      throw new UnsupportedOperationException("the shared YARPC timer cannot be shut down");
    }
  }
}
