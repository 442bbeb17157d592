package io.yarpc.benchmarks.load;

import io.yarpc.internal.DaemonThreads;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Cached thread pools like grpc-java's and YARPC's defaults (unbounded, idle threads kept 60 s), but with
 * thread names that tell the harness which side a thread works for: the {@link ThreadAccounting}
 * attributes threads whose names start with {@value #SERVER_PREFIX} to the server and {@value
 * #CLIENT_PREFIX} to the client.
 */
final class NamedThreads {
  static final String SERVER_PREFIX = "bench-server-";
  static final String CLIENT_PREFIX = "bench-client-";

  private NamedThreads() {}

  /**
   * YARPC's default pool for handlers and protobuf callbacks ({@code DaemonThreads.elasticPool}), whose
   * threads are called {@code <prefix><name>-<n>}.
   */
  static ExecutorService yarpcPool(String prefix, String name) {
    return DaemonThreads.elasticPool(prefix + name + "-", Integer.MAX_VALUE);
  }

  /** A cached pool whose threads are called {@code <prefix><name>-<n>}. */
  static ExecutorService cachedPool(String prefix, String name) {
    AtomicInteger n = new AtomicInteger();
    return new ThreadPoolExecutor(
        0,
        Integer.MAX_VALUE,
        60,
        TimeUnit.SECONDS,
        new SynchronousQueue<>(),
        r -> {
          Thread t = new Thread(r, prefix + name + "-" + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        });
  }
}
