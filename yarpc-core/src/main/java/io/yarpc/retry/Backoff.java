package io.yarpc.retry;

import static java.util.Objects.requireNonNull;

import io.yarpc.internal.Checks;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Exponential backoff with full jitter: the delay before retry {@code n} (counted from 0) is a uniformly
 * random duration between zero and {@code min(max, first * 2^n)}. The randomness spreads the retries of
 * many clients that failed together, so they do not come back in waves.
 *
 * <p>The one backoff of yarpc-java: retries of calls ({@link RetryMiddleware}) and the transports'
 * reconnects and peer probes use it.
 *
 * <pre>{@code
 * Backoff backoff = Backoff.builder().first(Duration.ofMillis(10)).max(Duration.ofSeconds(1)).build();
 * long nanos = backoff.delayNanos(attempt);
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 */
public final class Backoff {
  private final long firstNanos;
  private final long maxNanos;

  private Backoff(Builder b) {
    if (b.first.compareTo(b.max) > 0) {
      throw new IllegalArgumentException(
          "first must not be longer than max: first " + b.first + ", max " + b.max);
    }
    this.firstNanos = saturatedNanos(b.first);
    this.maxNanos = saturatedNanos(b.max);
  }

  /** A builder with the defaults: first 10 ms, max 1 min (yarpc-go's exponential backoff). */
  public static Builder builder() {
    return new Builder();
  }

  /** Exponential backoff from {@code first}, doubling, capped at {@code max}, with full jitter. */
  public static Backoff exponential(Duration first, Duration max) {
    return builder().first(first).max(max).build();
  }

  /** The upper bound of the first delay. */
  public Duration first() {
    return Duration.ofNanos(firstNanos);
  }

  /** The cap of every delay. */
  public Duration max() {
    return Duration.ofNanos(maxNanos);
  }

  /**
   * The longest delay before retry {@code attempt}: {@code min(max, first * 2^attempt)}.
   *
   * @throws IllegalArgumentException when {@code attempt} is negative
   */
  public long capNanos(int attempt) {
    if (attempt < 0) {
      throw new IllegalArgumentException("attempt must not be negative: " + attempt);
    }
    // first << attempt overflows past 62 bits: stop doubling once the cap is reached
    return attempt >= Long.numberOfLeadingZeros(firstNanos) - 1
        ? maxNanos
        : Math.min(maxNanos, firstNanos << attempt);
  }

  /**
   * A random delay before retry {@code attempt} (0 for the first retry), uniform in {@code [0,
   * capNanos(attempt)]}.
   *
   * @throws IllegalArgumentException when {@code attempt} is negative
   */
  public long delayNanos(int attempt) {
    return ThreadLocalRandom.current().nextLong(capNanos(attempt) + 1);
  }

  /** {@link #delayNanos} as a {@link Duration}. */
  public Duration delay(int attempt) {
    return Duration.ofNanos(delayNanos(attempt));
  }

  private static long saturatedNanos(Duration d) {
    try {
      return Math.min(d.toNanos(), Long.MAX_VALUE / 2);
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE / 2;
    }
  }

  @Override
  public String toString() {
    return "Backoff{exponential, first " + first() + ", max " + max() + ", full jitter}";
  }

  /** Builds a {@link Backoff}. Not thread-safe. */
  public static final class Builder {
    private Duration first = Duration.ofMillis(10);
    private Duration max = Duration.ofMinutes(1);

    private Builder() {}

    /** The upper bound of the first delay, doubled for each later one; default 10 ms. */
    public Builder first(Duration first) {
      this.first = Checks.positive(requireNonNull(first, "first"), "first");
      return this;
    }

    /** The cap of every delay; default 1 min. */
    public Builder max(Duration max) {
      this.max = Checks.positive(requireNonNull(max, "max"), "max");
      return this;
    }

    /**
     * The backoff.
     *
     * @throws IllegalArgumentException when {@code first} is longer than {@code max}
     */
    public Backoff build() {
      return new Backoff(this);
    }
  }
}
