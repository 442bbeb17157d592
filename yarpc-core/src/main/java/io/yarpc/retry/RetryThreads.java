package io.yarpc.retry;

import java.util.concurrent.Executor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads that start the retries of every {@code RetryMiddleware} without an executor of its own: a
 * pool of daemon threads named {@code yarpc-retry-N}, made when needed and gone after a minute idle. A
 * retry starts on a thread of its own rather than on the timer's (which must stay free to fire every
 * call's deadline) or on the common {@code ForkJoinPool} (which an application's parallel streams and
 * async tasks may keep busy, holding retries back for as long). Created on first use; thread-safe.
 */
final class RetryThreads {
  private RetryThreads() {}

  private static final class Holder {
    static final Executor POOL = newPool();
  }

  /** The shared pool. */
  static Executor pool() {
    return Holder.POOL;
  }

  private static Executor newPool() {
    AtomicInteger count = new AtomicInteger();
    return new ThreadPoolExecutor(
        0,
        Integer.MAX_VALUE,
        60,
        TimeUnit.SECONDS,
        new SynchronousQueue<>(),
        task -> {
          Thread t = new Thread(task, "yarpc-retry-" + count.incrementAndGet());
          t.setDaemon(true);
          return t;
        });
  }
}
