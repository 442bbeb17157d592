package io.yarpc.transport.tchannel.internal;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The bytes all connections of one inbound hold for call messages still being assembled (not yet handed
 * to a handler), against the inbound's {@code maxPendingBytes}. Each connection's {@link PendingBytes}
 * adds and removes its share here; a connection that holds some of these bytes while the total is at or
 * past the budget stops reading ({@link Connection}) and {@linkplain #await waits} here until the total
 * drops below the budget again, when it is woken on its own event loop.
 *
 * <p>Thread-safe: connections on every event loop share one budget.
 */
public final class PendingBudget {
  /** No budget: for connections the transport dialled. */
  public static final PendingBudget UNLIMITED = new PendingBudget(Long.MAX_VALUE);

  private final long max;
  private final AtomicLong total = new AtomicLong();
  private final Set<Runnable> waiting = ConcurrentHashMap.newKeySet();

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
    if (total.addAndGet(-bytes) < max && !waiting.isEmpty()) {
      for (Runnable wake : waiting) {
        if (waiting.remove(wake)) {
          wake.run();
        }
      }
    }
  }

  /**
   * Registers {@code wake} to run (once) when the total drops below the budget.
   *
   * @return false, without registering, when the total is already below the budget (the caller need not
   *     wait)
   */
  boolean await(Runnable wake) {
    waiting.add(wake);
    if (!exhausted()) {
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
