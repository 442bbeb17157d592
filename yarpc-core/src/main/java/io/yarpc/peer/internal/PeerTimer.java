package io.yarpc.peer.internal;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;

/**
 * The one timer that all peer choosers share to time out choices that wait for a peer. It runs on a single
 * daemon thread named {@code yarpc-peer-timer}, created on first use and never shut down (it does not keep
 * the JVM alive). Tasks must be short and must not block: a choice that times out is failed on this thread.
 * Nobody may shut it down; the returned view rejects it.
 */
public final class PeerTimer {
  private PeerTimer() {}

  /** The shared scheduler. */
  public static ScheduledExecutorService scheduler() {
    return Holder.INSTANCE;
  }

  private static final class Holder {
    static final ScheduledExecutorService INSTANCE = create();

    private static ScheduledExecutorService create() {
      ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, runnable -> {
        Thread thread = new Thread(runnable, "yarpc-peer-timer");
        thread.setDaemon(true);
        return thread;
      });
      // Most timeouts are cancelled because a peer turned up: drop them at once instead of at expiry.
      executor.setRemoveOnCancelPolicy(true);
      return Executors.unconfigurableScheduledExecutorService(executor);
    }
  }
}
