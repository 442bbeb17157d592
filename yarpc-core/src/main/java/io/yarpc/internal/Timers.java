package io.yarpc.internal;

import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The one shared daemon timer thread ({@code yarpc-timer}) for call deadlines, grpc context deadlines
 * and peer-choice timeouts; tasks must be quick. See {@link DeadlineTimer} for why it is not a
 * {@code ScheduledThreadPoolExecutor}.
 */
public final class Timers {
  private static final DeadlineTimer TIMER = new DeadlineTimer("yarpc-timer");
  private static final ScheduledExecutorService EXECUTOR = new TimerExecutor();

  private Timers() {}

  /** Runs {@code task} after {@code nanos} nanoseconds (at once when not positive). */
  public static ScheduledFuture<?> schedule(Runnable task, long nanos) {
    return TIMER.schedule(task, nanos);
  }

  /**
   * The timer as an executor, for libraries that take one (grpc's {@code Context.withDeadline}): one-shot
   * {@code schedule(Runnable, ...)} and {@code execute}; anything else (periodic tasks, callables,
   * shutdown) is refused with {@link UnsupportedOperationException}.
   */
  public static ScheduledExecutorService scheduler() {
    return EXECUTOR;
  }

  /** Timers queued, cancelled or not (for tests). */
  static int queued() {
    return TIMER.queued();
  }

  private static final class TimerExecutor extends AbstractExecutorService
      implements ScheduledExecutorService {
    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
      return TIMER.schedule(command, unit.toNanos(delay));
    }

    @Override
    public void execute(Runnable command) {
      TIMER.schedule(command, 0);
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
      throw unsupported();
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period,
        TimeUnit unit) {
      throw unsupported();
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay,
        TimeUnit unit) {
      throw unsupported();
    }

    @Override
    public void shutdown() {
      throw unsupported();
    }

    @Override
    public List<Runnable> shutdownNow() {
      throw unsupported();
    }

    @Override
    public boolean isShutdown() {
      return false;
    }

    @Override
    public boolean isTerminated() {
      return false;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
      return false;
    }

    private static UnsupportedOperationException unsupported() {
      return new UnsupportedOperationException("the shared YARPC timer runs one-shot tasks only");
    }
  }
}
