package io.yarpc.internal;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/** One shared daemon timer thread for deadlines and peer-choice timeouts; tasks must be quick. */
public final class Timers {
  private static final ScheduledExecutorService TIMER = create();

  private Timers() {}

  private static ScheduledExecutorService create() {
    ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = Executors.defaultThreadFactory().newThread(r);
      t.setName("yarpc-timer");
      t.setDaemon(true);
      return t;
    });
    executor.setRemoveOnCancelPolicy(true);
    return executor;
  }

  /** Runs {@code task} after {@code nanos} nanoseconds (at once when not positive). */
  public static ScheduledFuture<?> schedule(Runnable task, long nanos) {
    return TIMER.schedule(task, Math.max(0, nanos), TimeUnit.NANOSECONDS);
  }
}
