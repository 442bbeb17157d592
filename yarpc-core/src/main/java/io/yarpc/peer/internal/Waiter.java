package io.yarpc.peer.internal;

import io.yarpc.peer.PeerLease;
import io.yarpc.transport.RequestMeta;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;

/**
 * A peer choice waiting for a peer: the future the chooser handed out, the call it is for, when the wait
 * began, and the timer that ends it. The chooser that queues it sets {@link #timeout} under its lock before anyone else
 * can see the waiter, and completes the future outside its lock.
 */
public final class Waiter {
  /** The chooser's answer to the call. */
  public final CompletableFuture<PeerLease> future = new CompletableFuture<>();

  /** {@link System#nanoTime()} when the wait began. */
  public final long startNanos;

  /** The call the choice is for (a strategy may choose by it), or null when the chooser does not care. */
  public final RequestMeta meta;

  /** The timer that ends the wait; set once, right after the waiter is queued. */
  public volatile ScheduledFuture<?> timeout;

  /** A waiter whose wait began at {@code startNanos}. */
  public Waiter(long startNanos) {
    this(startNanos, null);
  }

  /** A waiter for the call {@code meta} whose wait began at {@code startNanos}. */
  public Waiter(long startNanos, RequestMeta meta) {
    this.startNanos = startNanos;
    this.meta = meta;
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
