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
 * <p><b>Reservations.</b> An HTTP/2 body received into one array made for it ({@code ReceivedContent})
 * counts its whole length from its first byte ({@link #tryReserve}). What such arrays hold beyond the bytes
 * that arrived is at most a quarter of the budget: a peer that declares large bodies and sends a byte of
 * each reserves no more than that (its later bodies go into pieces of what arrives), and the rest of the
 * budget is left to bytes that were sent.
 *
 * <p>Thread-safe: connections on every event loop add and release; a connection waiting for the total to
 * drop is woken on its own event loop.
 */
public final class PendingBytes {
  private final long max;
  private final long maxUnfilled;
  private final AtomicLong total = new AtomicLong();
  private final AtomicLong unfilled = new AtomicLong(); // of total: reserved, not yet received
  private final AtomicReference<ConnectionBudget> exempt = new AtomicReference<>();
  private final Set<ConnectionBudget> waiting = ConcurrentHashMap.newKeySet();

  /** A budget of {@code max} bytes for the whole inbound. */
  public PendingBytes(long max) {
    this.max = max;
    this.maxUnfilled = max / 4;
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

  /** Reserved bytes not yet received (see the class comment). */
  public long unfilled() {
    return unfilled.get();
  }

  /**
   * Adds {@code n} bytes reserved ahead of their arrival if the total stays within the budget and the
   * reservations not yet filled within a quarter of it; false (nothing added) otherwise. {@link #filled}
   * tells as the reserved bytes arrive or are given up.
   */
  boolean tryReserve(long n) {
    for (long u = unfilled.get(); ; u = unfilled.get()) {
      if (n > maxUnfilled - u) {
        return false;
      }
      if (unfilled.compareAndSet(u, u + n)) {
        break;
      }
    }
    for (long t = total.get(); n <= max - t; t = total.get()) {
      if (total.compareAndSet(t, t + n)) {
        return true;
      }
    }
    unfilled.addAndGet(-n);
    return false;
  }

  /** {@code n} reserved bytes arrived, or will not. */
  void filled(long n) {
    unfilled.addAndGet(-n);
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
