package io.yarpc.encoding.protobuf.internal;

import io.yarpc.internal.DaemonThreads;
import java.util.concurrent.ExecutorService;

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
    static final ExecutorService POOL =
        DaemonThreads.cachedPool("yarpc-protobuf-callback-", Integer.MAX_VALUE);
  }

  /** The pool that runs grpc listener callbacks by default. */
  public static ExecutorService callbacks() {
    return Callbacks.POOL;
  }
}
