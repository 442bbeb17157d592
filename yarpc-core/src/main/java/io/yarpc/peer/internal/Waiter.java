package io.yarpc.peer.internal;

import io.yarpc.peer.PeerLease;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;

/**
 * A peer choice waiting for a peer: the future the chooser handed out, when the wait began, and the
 * timer that ends it. The chooser that queues it sets {@link #timeout} under its lock before anyone else
 * can see the waiter, and completes the future outside its lock.
 */
public final class Waiter {
  /** The chooser's answer to the call. */
  public final CompletableFuture<PeerLease> future = new CompletableFuture<>();

  /** {@link System#nanoTime()} when the wait began. */
  public final long startNanos;

  /** The timer that ends the wait; set once, right after the waiter is queued. */
  public volatile ScheduledFuture<?> timeout;

  /** A waiter whose wait began at {@code startNanos}. */
  public Waiter(long startNanos) {
    this.startNanos = startNanos;
  }

  /** Stops the timer, if it was set. */
  public void cancelTimeout() {
    ScheduledFuture<?> t = timeout;
    if (t != null) {
      t.cancel(false);
    }
  }

  /** Stops the timer and fails the wait with {@code error}. */
  public void fail(Throwable error) {
    cancelTimeout();
    future.completeExceptionally(error);
  }
}
