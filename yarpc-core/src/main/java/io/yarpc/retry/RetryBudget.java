package io.yarpc.retry;

import static java.util.Objects.requireNonNull;

import io.yarpc.internal.Checks;
import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * Bounds how many retries a client makes compared with its calls, so that retries cannot multiply the
 * load on a service that is failing (after Finagle's {@code RetryBudget}). Every call {@linkplain
 * #deposit() deposits}; every retry must {@linkplain #tryWithdraw() withdraw}, and may only when the
 * balance allows. Over the last {@code ttl} the balance is
 *
 * <pre>
 *   minRetriesPerSecond * ttl  +  percentCanRetry * calls  -  retries
 * </pre>
 *
 * so in an outage where every call fails, retries add at most {@code percentCanRetry} of the calls'
 * load, plus a small reserve that lets a client with little traffic retry at all. Deposits and
 * withdrawals older than {@code ttl} no longer count (they are kept in ten slots, each a tenth of {@code
 * ttl} long).
 *
 * <p>Defaults: {@code percentCanRetry} 10 %, {@code minRetriesPerSecond} 10, {@code ttl} 10 s. One budget
 * is meant to be shared by every call of a client (one {@link RetryMiddleware}).
 *
 * <p>Thread-safe.
 */
public final class RetryBudget {
  private static final int SLOTS = 10;
  // amounts are counted in thousandths of a retry, so a 10 % deposit is a whole number
  private static final long UNIT = 1000;

  private final Duration ttl;
  private final int minRetriesPerSecond;
  private final double percentCanRetry;
  private final long deposit; // per call, in UNITs
  private final long reserve; // in UNITs
  private final long slotNanos;
  private final LongSupplier clock;

  // guarded by this: per slot, deposits minus withdrawals (UNITs), and which slot number it holds
  private final long[] net = new long[SLOTS];
  private final long[] slotNumber = new long[SLOTS];
  private long newest = Long.MIN_VALUE; // the slot number last seen

  private RetryBudget(Builder b, LongSupplier clock) {
    this.ttl = b.ttl;
    this.minRetriesPerSecond = b.minRetriesPerSecond;
    this.percentCanRetry = b.percentCanRetry;
    this.deposit = Math.round(b.percentCanRetry * UNIT);
    this.reserve = (long) b.minRetriesPerSecond * b.ttl.toMillis(); // min * ttl in s * UNIT
    this.slotNanos = b.ttl.toNanos() / SLOTS;
    this.clock = clock;
    java.util.Arrays.fill(slotNumber, Long.MIN_VALUE);
  }

  /** A builder with the defaults (10 %, 10 per second, 10 s). */
  public static Builder builder() {
    return new Builder();
  }

  /** A budget with the defaults. */
  public static RetryBudget defaults() {
    return builder().build();
  }

  /** A budget that never allows a retry: for clients that must not retry at all. */
  public static RetryBudget none() {
    return builder().percentCanRetry(0).minRetriesPerSecond(0).build();
  }

  /** Counts a call (its first attempt): it earns {@code percentCanRetry} of a retry. */
  public void deposit() {
    if (deposit == 0) {
      return;
    }
    synchronized (this) {
      net[currentSlot()] += deposit;
    }
  }

  /** Takes one retry from the budget: true when the balance allowed it, false (and nothing taken) if not. */
  public synchronized boolean tryWithdraw() {
    int slot = currentSlot();
    if (available() < UNIT) {
      return false;
    }
    net[slot] -= UNIT;
    return true;
  }

  /** How many retries the budget would allow now (a snapshot, for tests and introspection). */
  public synchronized long balance() {
    currentSlot();
    return Math.max(0, available() / UNIT);
  }

  /** The window over which calls and retries count. */
  public Duration ttl() {
    return ttl;
  }

  /** Retries allowed per second even without calls. */
  public int minRetriesPerSecond() {
    return minRetriesPerSecond;
  }

  /** The fraction of calls (0 to 1) that may be retried. */
  public double percentCanRetry() {
    return percentCanRetry;
  }

  // the index of the current slot, emptied first if it held an older one; guarded by this
  private int currentSlot() {
    long now = Math.floorDiv(clock.getAsLong(), slotNanos);
    int i = (int) Math.floorMod(now, (long) SLOTS);
    if (slotNumber[i] != now) {
      // an index is reused every SLOTS slots: whatever it held is older than the window
      slotNumber[i] = now;
      net[i] = 0;
    }
    newest = now;
    return i;
  }

  // the balance in UNITs over the slots of the window ending with the newest; guarded by this
  private long available() {
    long sum = reserve;
    for (int i = 0; i < SLOTS; i++) {
      if (slotNumber[i] > newest - SLOTS) {
        sum += net[i];
      }
    }
    return sum;
  }

  @Override
  public String toString() {
    return "RetryBudget{"
        + Math.round(percentCanRetry * 100)
        + " % of calls, "
        + minRetriesPerSecond
        + "/s, ttl "
        + ttl
        + "}";
  }

  /** Builds a {@link RetryBudget}. Not thread-safe. */
  public static final class Builder {
    private Duration ttl = Duration.ofSeconds(10);
    private int minRetriesPerSecond = 10;
    private double percentCanRetry = 0.1;
    private LongSupplier clock = System::nanoTime;

    private Builder() {}

    /** The window over which calls and retries count, from 1 s to 1 min; default 10 s. */
    public Builder ttl(Duration ttl) {
      Checks.positive(requireNonNull(ttl, "ttl"), "ttl");
      if (ttl.compareTo(Duration.ofSeconds(1)) < 0 || ttl.compareTo(Duration.ofMinutes(1)) > 0) {
        throw new IllegalArgumentException("ttl must be from 1s to 1m: " + ttl);
      }
      this.ttl = ttl;
      return this;
    }

    /** Retries allowed per second even when there are few calls (0 for none); default 10. */
    public Builder minRetriesPerSecond(int retries) {
      if (retries < 0) {
        throw new IllegalArgumentException("minRetriesPerSecond must not be negative: " + retries);
      }
      this.minRetriesPerSecond = retries;
      return this;
    }

    /**
     * The fraction of calls that may be retried, from 0 to 1 ({@code 0.1} for 10 %); default 0.1. Above 1
     * is refused: it would let retries add more load than the calls themselves.
     */
    public Builder percentCanRetry(double fraction) {
      if (!(fraction >= 0 && fraction <= 1)) {
        throw new IllegalArgumentException("percentCanRetry must be from 0 to 1: " + fraction);
      }
      this.percentCanRetry = fraction;
      return this;
    }

    Builder clock(LongSupplier clock) {
      this.clock = clock;
      return this;
    }

    /** The budget. */
    public RetryBudget build() {
      return new RetryBudget(this, clock);
    }
  }
}
