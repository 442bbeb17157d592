package io.yarpc.transport.http.internal;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The bytes all connections of one inbound hold for requests received but not yet handed to a handler,
 * against {@code InboundLimits.maxPendingBytes}: past it, every connection that holds such bytes stops
 * receiving (see {@link ConnectionBudget}) until the total drops again.
 *
 * <p><b>Progress.</b> When every connection holds part of a request and the total is past the budget, none
 * could finish its request and none would ever give bytes back. So one connection at a time is
 * <em>exempt</em>: its oldest request may be received to its end (at most {@code maxRequestSize} past the
 * budget). The exemption ends when that request is complete or dropped (408 ends a stalled one), and then
 * passes to the next connection that asks.
 *
 * <p>Thread-safe: connections on every event loop add and release; a connection waiting for the total to
 * drop is woken on its own event loop.
 */
public final class PendingBytes {
  private final long max;
  private final AtomicLong total = new AtomicLong();
  private final AtomicReference<ConnectionBudget> exempt = new AtomicReference<>();
  private final Set<ConnectionBudget> waiting = ConcurrentHashMap.newKeySet();

  /** A budget of {@code max} bytes for the whole inbound. */
  public PendingBytes(long max) {
    this.max = max;
  }

  /** Bytes held now. */
  public long total() {
    return total.get();
  }

  void add(long n) {
    total.addAndGet(n);
  }

  void release(long n) {
    long after = total.addAndGet(-n);
    if (after <= max && after + n > max) {
      wakeWaiting();
    }
  }

  /** Adds {@code n} if the total stays within the budget; false (nothing added) otherwise. */
  boolean tryAdd(long n) {
    for (long t = total.get(); t + n <= max; t = total.get()) {
      if (total.compareAndSet(t, t + n)) {
        return true;
      }
    }
    return false;
  }

  boolean withinBudget() {
    return total.get() <= max;
  }

  /** Whether {@code c} holds the exemption, taking it when nobody does. */
  boolean tryExempt(ConnectionBudget c) {
    return exempt.get() == c || exempt.compareAndSet(null, c);
  }

  /** {@code c} gives the exemption back (if it holds it); the waiting connections look again. */
  void endExempt(ConnectionBudget c) {
    if (exempt.compareAndSet(c, null)) {
      wakeWaiting();
    }
  }

  /** {@code c} has receivers paused until the total drops or the exemption is free. */
  void await(ConnectionBudget c) {
    waiting.add(c);
  }

  void stopWaiting(ConnectionBudget c) {
    waiting.remove(c);
  }

  private void wakeWaiting() {
    for (ConnectionBudget c : waiting) {
      c.wake();
    }
  }
}
