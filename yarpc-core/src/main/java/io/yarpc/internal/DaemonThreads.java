package io.yarpc.internal;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** The pools of daemon threads YARPC makes for itself (handlers, callbacks, retries). */
public final class DaemonThreads {
  private DaemonThreads() {}

  /**
   * A pool that hands each task to an idle thread or a new one (no queue), up to {@code maxThreads}
   * (then it rejects); its threads are daemons named {@code namePrefix} and a count from 1, and end
   * after a minute idle. Thread-safe.
   */
  public static ExecutorService cachedPool(String namePrefix, int maxThreads) {
    return new ThreadPoolExecutor(
        0, maxThreads, 60, TimeUnit.SECONDS, new SynchronousQueue<>(), daemons(namePrefix));
  }

  /**
   * A pool for tasks that are usually quick but may block ({@link ElasticPool}): as many threads as
   * processors (at least 2) take tasks from a queue, and a watcher thread ({@code namePrefix +
   * "watch"}) starts more, up to {@code maxThreads}, for tasks that stand queued while every thread is
   * busy; it rejects once {@code maxThreads} threads are busy and as many tasks wait. Its threads are
   * daemons named {@code namePrefix} and a count from 1, and end after a minute idle. Thread-safe.
   */
  public static ExecutorService elasticPool(String namePrefix, int maxThreads) {
    int base = Math.max(2, Runtime.getRuntime().availableProcessors());
    return new ElasticPool(
        Math.min(base, maxThreads),
        maxThreads,
        daemons(namePrefix),
        r -> {
          Thread t = new Thread(r, namePrefix + "watch");
          t.setDaemon(true);
          return t;
        });
  }

  private static ThreadFactory daemons(String namePrefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, namePrefix + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }
}
