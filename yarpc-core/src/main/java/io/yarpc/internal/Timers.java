package io.yarpc.internal;

import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

/**
 * The one shared daemon timer thread ({@code yarpc-timer}) for call deadlines, grpc context deadlines
 * and peer-choice timeouts; tasks must be quick. See {@link DeadlineTimer} for why it is not a
 * {@code ScheduledThreadPoolExecutor}.
 */
public final class Timers {
  private static final DeadlineTimer TIMER = new DeadlineTimer("yarpc-timer");
  private static final ScheduledExecutorService EXECUTOR = new TimerExecutor(true);
  private static final ScheduledExecutorService UNARMED = new TimerExecutor(false);
  private static final LongAdder SCHEDULED = new LongAdder();

  private Timers() {}

  /** Runs {@code task} after {@code nanos} nanoseconds (at once when not positive). */
  public static ScheduledFuture<?> schedule(Runnable task, long nanos) {
    SCHEDULED.increment();
    return TIMER.schedule(task, nanos);
  }

  /**
   * Runs {@code function.accept(target)} after {@code nanos} nanoseconds (at once when not positive): with
   * a method reference capturing nothing and a per-call object as target, the returned task is the only
   * allocation.
   */
  static <T> ScheduledFuture<?> schedule(Consumer<? super T> function, T target, long nanos) {
    SCHEDULED.increment();
    return TIMER.schedule(function, target, nanos);
  }

  /** How many tasks were ever scheduled on the shared timer (tests count timers per call with it). */
  public static long scheduledTotal() {
    return SCHEDULED.sum();
  }

  /**
   * An executor whose one-shot {@code schedule} arms nothing: for a library deadline that must exist (so
   * code can read it) but whose expiry something else already delivers — a grpc {@code Context} inside a
   * dispatched call, which the call's own deadline timer cancels. {@code execute} runs on the timer
   * thread as {@link #scheduler()}'s does.
   */
  public static ScheduledExecutorService unarmed() {
    return UNARMED;
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
    private final boolean armed;

    TimerExecutor(boolean armed) {
      this.armed = armed;
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
      if (!armed) {
        return Unarmed.INSTANCE; // nothing queued: nothing runs
      }
      return Timers.schedule(command, unit.toNanos(delay));
    }

    @Override
    public void execute(Runnable command) {
      Timers.schedule(command, 0);
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
      throw unsupported();
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(
        Runnable command, long initialDelay, long period, TimeUnit unit) {
      throw unsupported();
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(
        Runnable command, long initialDelay, long delay, TimeUnit unit) {
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

    /**
     * What an unarmed schedule returns, shared: a task that never runs and cannot be cancelled (there is
     * nothing to cancel; grpc's {@code Context} ignores the answer), so it is never done either.
     */
    private static final class Unarmed implements ScheduledFuture<Object> {
      static final Unarmed INSTANCE = new Unarmed();

      @Override
      public long getDelay(TimeUnit unit) {
        return Long.MAX_VALUE;
      }

      @Override
      public int compareTo(java.util.concurrent.Delayed other) {
        return Long.compare(getDelay(TimeUnit.NANOSECONDS), other.getDelay(TimeUnit.NANOSECONDS));
      }

      @Override
      public boolean cancel(boolean mayInterruptIfRunning) {
        return false;
      }

      @Override
      public boolean isCancelled() {
        return false;
      }

      @Override
      public boolean isDone() {
        return false;
      }

      @Override
      public Object get() {
        throw new UnsupportedOperationException("an unarmed task never completes");
      }

      @Override
      public Object get(long timeout, TimeUnit unit) {
        throw new UnsupportedOperationException("an unarmed task never completes");
      }
    }

    private static UnsupportedOperationException unsupported() {
      return new UnsupportedOperationException("the shared YARPC timer runs one-shot tasks only");
    }
  }
}
