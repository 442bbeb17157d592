package io.yarpc.transport.tchannel.internal;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The bytes all connections of one inbound hold for call messages still being assembled (not yet handed
 * to a handler), against the inbound's {@code maxPendingBytes}. Each connection's {@link PendingBytes}
 * adds and removes its share here; a connection that holds some of these bytes while the total is at or
 * past the budget stops reading ({@link Connection}) and {@linkplain #await waits} here until the total
 * drops below the budget again, when it is woken on its own event loop.
 *
 * <p><b>Progress.</b> When every connection holding bytes stopped reading, none could finish a message and
 * none would give bytes back until messages time out. So one connection at a time is <em>exempt</em>
 * ({@link #tryExempt}): it reads on past the budget to finish its oldest message still arriving (at most
 * a request's size, plus what its other messages may hold). It gives the exemption back when that message
 * is complete, ended, or timed out, or when it closes ({@link #endExempt}), and the waiting connections
 * are woken to look again.
 *
 * <p>Thread-safe: connections on every event loop share one budget.
 */
public final class PendingBudget {
  /** No budget: for connections the transport dialled. */
  public static final PendingBudget UNLIMITED = new PendingBudget(Long.MAX_VALUE);

  private final long max;
  private final AtomicLong total = new AtomicLong();
  private final Set<Runnable> waiting = ConcurrentHashMap.newKeySet();
  private final AtomicReference<Object> exempt = new AtomicReference<>();

  /** A budget of {@code max} bytes. */
  public PendingBudget(long max) {
    if (max <= 0) {
      throw new IllegalArgumentException("max must be positive: " + max);
    }
    this.max = max;
  }

  /** The budget, in bytes. */
  public long max() {
    return max;
  }

  /** The bytes held now by all connections together. */
  public long total() {
    return total.get();
  }

  /** Whether the total is at or past the budget. */
  boolean exhausted() {
    return total.get() >= max;
  }

  void add(long bytes) {
    if (max != Long.MAX_VALUE) {
      total.addAndGet(bytes);
    }
  }

  void remove(long bytes) {
    if (max == Long.MAX_VALUE) {
      return;
    }
    if (total.addAndGet(-bytes) < max) {
      wakeWaiting();
    }
  }

  /** Whether {@code connection} holds the exemption, taking it when nobody does. */
  boolean tryExempt(Object connection) {
    return exempt.get() == connection || exempt.compareAndSet(null, connection);
  }

  /** Whether no connection holds the exemption. */
  boolean exemptionFree() {
    return exempt.get() == null;
  }

  /** {@code connection} gives the exemption back (if it holds it); the waiting connections look again. */
  void endExempt(Object connection) {
    if (exempt.compareAndSet(connection, null)) {
      wakeWaiting();
    }
  }

  private void wakeWaiting() {
    if (waiting.isEmpty()) {
      return;
    }
    for (Runnable wake : waiting) {
      if (waiting.remove(wake)) {
        wake.run();
      }
    }
  }

  /**
   * Registers {@code wake} to run (once) when the total drops below the budget or the exemption is given
   * back.
   *
   * @return false, without registering, when the total is already below the budget or nobody holds the
   *     exemption (the caller need not wait)
   */
  boolean await(Runnable wake) {
    waiting.add(wake);
    if (!exhausted() || exemptionFree()) {
      waiting.remove(wake);
      return false;
    }
    return true;
  }

  /** Forgets {@code wake} (its connection closed or no longer waits). */
  void cancel(Runnable wake) {
    waiting.remove(wake);
  }
}
