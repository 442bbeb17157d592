package io.yarpc.transport;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A point in time by which a call must finish, on the monotonic clock ({@link System#nanoTime()}).
 * Transports send the remaining time ({@code Context-TTL-MS}, {@code grpc-timeout}, TChannel {@code ttl})
 * and the receiving side starts a new deadline from it, so deadlines shrink naturally across hops.
 */
public final class Deadline implements Comparable<Deadline> {
  /**
   * Timeouts are clamped to +/- this many nanoseconds (about 73 years), so that adding them to
   * {@link System#nanoTime()} and comparing two deadlines by difference cannot overflow.
   */
  private static final long MAX_NANOS = Long.MAX_VALUE / 4;

  private final long nanoTime;

  private Deadline(long nanoTime) {
    this.nanoTime = nanoTime;
  }

  /** A deadline {@code timeout} from now. */
  public static Deadline after(Duration timeout) {
    requireNonNull(timeout, "timeout");
    return new Deadline(System.nanoTime() + saturatedNanos(timeout));
  }

  /** A deadline {@code amount unit}s from now. */
  public static Deadline after(long amount, TimeUnit unit) {
    return new Deadline(System.nanoTime() + clamp(unit.toNanos(amount)));
  }

  private static long saturatedNanos(Duration d) {
    try {
      return clamp(d.toNanos());
    } catch (ArithmeticException e) {
      return d.isNegative() ? -MAX_NANOS : MAX_NANOS;
    }
  }

  private static long clamp(long nanos) {
    return Math.max(-MAX_NANOS, Math.min(MAX_NANOS, nanos));
  }

  /** Time left, negative once passed. */
  public Duration timeRemaining() {
    return Duration.ofNanos(nanoTime - System.nanoTime());
  }

  /** Time left in nanoseconds, negative once passed. */
  public long remainingNanos() {
    return nanoTime - System.nanoTime();
  }

  /** Time left in whole milliseconds, rounded up, never below zero. */
  public long remainingMillis() {
    long nanos = remainingNanos();
    return nanos <= 0 ? 0 : (nanos + 999_999) / 1_000_000;
  }

  /** Whether the deadline has passed. */
  public boolean isExpired() {
    return remainingNanos() <= 0;
  }

  /** The earlier of this deadline and {@code other} ({@code other} may be null). */
  public Deadline min(Deadline other) {
    return other == null || compareTo(other) <= 0 ? this : other;
  }

  @Override
  public int compareTo(Deadline o) {
    return Long.compare(nanoTime - o.nanoTime, 0);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Deadline && ((Deadline) o).nanoTime == nanoTime;
  }

  @Override
  public int hashCode() {
    return Long.hashCode(nanoTime);
  }

  @Override
  public String toString() {
    return "Deadline[" + timeRemaining() + " left]";
  }
}
