package io.yarpc.encoding.protobuf.internal;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Process-wide threads of the grpc adapters, created on first use, all daemons that exit when idle:
 * a cached pool for listener callbacks (as grpc-java's shared channel executor; user code such as a
 * stream observer may block in them, so they never run on a transport's I/O thread). grpc {@link
 * io.grpc.Context} deadlines arm no timer inside a dispatched call (its own deadline timer cancels them:
 * {@link io.yarpc.internal.Timers#unarmed()}), else they use YARPC's shared timer.
 */
public final class SharedExecutors {
  private SharedExecutors() {}

  private static final class Callbacks {
    static final ExecutorService POOL = newPool();

    private static ExecutorService newPool() {
      AtomicInteger n = new AtomicInteger();
      ThreadPoolExecutor pool =
          new ThreadPoolExecutor(
              0,
              Integer.MAX_VALUE,
              60,
              TimeUnit.SECONDS,
              new SynchronousQueue<>(),
              r -> {
                Thread t = new Thread(r, "yarpc-protobuf-callback-" + n.incrementAndGet());
                t.setDaemon(true);
                return t;
              });
      return pool;
    }
  }

  /** The pool that runs grpc listener callbacks by default. */
  public static ExecutorService callbacks() {
    return Callbacks.POOL;
  }
}
