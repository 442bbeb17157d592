package io.yarpc.encoding.protobuf.internal;

import io.yarpc.internal.DaemonThreads;
import java.util.concurrent.ExecutorService;

/**
 * Process-wide threads of the grpc adapters, created on first use, all daemons that exit when idle:
 * an elastic pool for listener callbacks ({@link DaemonThreads#elasticPool}: a few threads take them
 * from a queue, and one that waits behind busy threads for 2 ms gets a thread of its own, so that user
 * code such as a stream observer may block in them, as in grpc-java's cached shared channel executor;
 * they never run on a transport's I/O thread). grpc {@link
 * io.grpc.Context} deadlines arm no timer inside a dispatched call (its own deadline timer cancels them:
 * {@link io.yarpc.internal.Timers#unarmed()}), else they use YARPC's shared timer.
 */
public final class SharedExecutors {
  private SharedExecutors() {}

  private static final class Callbacks {
    static final ExecutorService POOL =
        DaemonThreads.elasticPool("yarpc-protobuf-callback-", Integer.MAX_VALUE);
  }

  /** The pool that runs grpc listener callbacks by default. */
  public static ExecutorService callbacks() {
    return Callbacks.POOL;
  }
}
