package io.yarpc.internal;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
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
    AtomicInteger n = new AtomicInteger();
    return new ThreadPoolExecutor(
        0,
        maxThreads,
        60,
        TimeUnit.SECONDS,
        new SynchronousQueue<>(),
        r -> {
          Thread t = new Thread(r, namePrefix + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        });
  }
}
