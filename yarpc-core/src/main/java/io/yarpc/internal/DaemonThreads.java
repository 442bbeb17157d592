package io.yarpc.internal;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** The pools of daemon threads YARPC makes for itself (handlers, callbacks, retries). */
public final class DaemonThreads {
  /**
   * How long a task of an {@link #elasticPool} waits behind blocked threads before a thread starts for it:
   * long enough that a burst of quick calls is served by the threads already running (measured: a small
   * call's handler runs in tens of microseconds), short enough that a blocking handler delays the calls
   * queued behind it by little more than a network round trip across a data centre.
   */
  static final long PATIENCE_MICROS = 2000;

  private DaemonThreads() {}

  /**
   * An {@link ElasticPool} for tasks that are usually quick but may block: the processor count (at least
   * 2) of working threads take tasks from a queue (a thread whose task has run 2 ms and that waits, in
   * the JVM or in a socket read as Linux sees it, or whose task has run 32 ms, counts as blocked, not
   * working), and tasks that have waited 2 ms get threads, one per blocked thread every half
   * millisecond and at most four per blocked task, up to {@code maxThreads} threads busy (and as many
   * tasks waiting; then it rejects). Tasks that wait only for busy cores start no threads. Threads are
   * daemons named {@code namePrefix} and a count from 1 and end after a minute idle. Thread-safe.
   */
  public static ExecutorService elasticPool(String namePrefix, int maxThreads) {
    int base = Math.min(maxThreads, Math.max(2, Runtime.getRuntime().availableProcessors()));
    return new ElasticPool(
        namePrefix, base, maxThreads, PATIENCE_MICROS, 60_000_000, TimeUnit.MICROSECONDS);
  }

  /**
   * A cached pool (for tasks that mostly block, such as retry back-offs): it hands each task to an idle
   * thread or a new one (no queue), up to {@code maxThreads} (then it rejects); its threads are daemons
   * named {@code namePrefix} and a count from 1, and end after a minute idle. Thread-safe.
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
