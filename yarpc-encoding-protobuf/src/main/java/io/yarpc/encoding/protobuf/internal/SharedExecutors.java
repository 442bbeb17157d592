package io.yarpc.encoding.protobuf.internal;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Process-wide threads of the grpc adapters, created on first use, all daemons that exit when idle:
 * a cached pool for listener callbacks (as grpc-java's shared channel executor; user code such as a
 * stream observer may block in them, so they never run on a transport's I/O thread) and one scheduler
 * thread for grpc {@link io.grpc.Context} deadlines.
 */
public final class SharedExecutors {
  private SharedExecutors() {}

  private static final class Callbacks {
    static final ExecutorService POOL = newPool();

    private static ExecutorService newPool() {
      AtomicInteger n = new AtomicInteger();
      ThreadPoolExecutor pool = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 60, TimeUnit.SECONDS,
          new SynchronousQueue<>(), r -> {
            Thread t = new Thread(r, "yarpc-protobuf-callback-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
          });
      return pool;
    }
  }

  private static final class Scheduler {
    static final ScheduledExecutorService INSTANCE = newScheduler();

    private static ScheduledExecutorService newScheduler() {
      ScheduledThreadPoolExecutor s = new ScheduledThreadPoolExecutor(1, r -> {
        Thread t = new Thread(r, "yarpc-protobuf-deadline");
        t.setDaemon(true);
        return t;
      });
      s.setRemoveOnCancelPolicy(true);
      s.setKeepAliveTime(60, TimeUnit.SECONDS);
      s.allowCoreThreadTimeOut(true);
      return s;
    }
  }

  /** The pool that runs grpc listener callbacks by default. */
  public static ExecutorService callbacks() {
    return Callbacks.POOL;
  }

  /** The scheduler behind grpc context deadlines. */
  public static ScheduledExecutorService scheduler() {
    return Scheduler.INSTANCE;
  }
}
