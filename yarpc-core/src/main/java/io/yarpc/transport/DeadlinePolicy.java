package io.yarpc.transport;

import static java.util.Objects.requireNonNull;

import io.yarpc.internal.Checks;
import java.time.Duration;

/**
 * What an inbound does with the deadline a call arrives with, before the call is handled: the one rule
 * every inbound applies (an inbound's builder takes a policy; the inbound calls {@link #apply} once it
 * knows the call's {@link RpcType}).
 *
 * <ul>
 *   <li><b>Default timeout</b>: a unary call that arrives without a deadline (a plain gRPC client that set
 *       none, say) gets one this long (at most the cap). With no default timeout (see {@link #strict()})
 *       such a call is refused by the dispatcher with {@code invalid-argument} {@code missing TTL}, as
 *       yarpc-go refuses it. Streams get no default timeout.
 *   <li><b>Cap</b>: a deadline further away than the cap is brought in to the cap, so no peer can hold a
 *       handler longer than the service allows; a stream that arrives without a deadline gets the cap as
 *       its deadline (without a cap it runs until it ends). Oneway handlers run after the acknowledgement
 *       without a deadline, so the cap does not bound them.
 * </ul>
 *
 * <p>Immutable and thread-safe.
 */
public final class DeadlinePolicy {
  private static final DeadlinePolicy STRICT = new DeadlinePolicy(null, null);

  private final Duration defaultTimeout;
  private final Duration maxTimeout;
  private final long maxTimeoutNanos;

  private DeadlinePolicy(Duration defaultTimeout, Duration maxTimeout) {
    this.defaultTimeout = defaultTimeout;
    this.maxTimeout = maxTimeout;
    this.maxTimeoutNanos = maxTimeout == null ? Long.MAX_VALUE : saturatedNanos(maxTimeout);
  }

  /**
   * yarpc-go's rule: unary (and oneway) calls must carry a deadline ({@code missing TTL} otherwise), no
   * cap.
   */
  public static DeadlinePolicy strict() {
    return STRICT;
  }

  /** Unary calls without a deadline get {@code defaultTimeout}; no cap. */
  public static DeadlinePolicy withDefaultTimeout(Duration defaultTimeout) {
    return builder().defaultTimeout(defaultTimeout).build();
  }

  /** A builder: no default timeout (strict), no cap. */
  public static Builder builder() {
    return new Builder();
  }

  /** The timeout given to unary calls that arrive without a deadline; null when they are refused. */
  public Duration defaultTimeout() {
    return defaultTimeout;
  }

  /** The furthest deadline a call may have; null for no cap. */
  public Duration maxTimeout() {
    return maxTimeout;
  }

  /**
   * The deadline a call of type {@code type} is handled with, given the one it arrived with ({@code
   * received}, null for none): the default timeout for a unary call without one, the cap when {@code
   * received} is further away, else {@code received} itself. Null means the call has no deadline (the
   * dispatcher then refuses a unary or oneway call with {@code missing TTL}).
   */
  public Deadline apply(Deadline received, RpcType type) {
    requireNonNull(type, "type");
    if (received == null) {
      if (type == RpcType.UNARY) {
        return defaultTimeout == null ? null : Deadline.after(capped(defaultTimeout));
      }
      // A stream without a deadline would run for ever: the cap is its deadline. (Oneway handlers
      // run after the ack without a deadline; the dispatcher decides about a oneway call without
      // one.)
      return type == RpcType.STREAMING && maxTimeout != null ? Deadline.after(maxTimeout) : null;
    }
    if (maxTimeout != null && received.remainingNanos() > maxTimeoutNanos) {
      return Deadline.after(maxTimeout);
    }
    return received;
  }

  /**
   * {@code meta} with the deadline {@link #apply} gives it: {@code meta} itself when that is unchanged.
   */
  public RequestMeta apply(RequestMeta meta, RpcType type) {
    Deadline received = meta.deadline();
    Deadline applied = apply(received, type);
    return applied == received ? meta : meta.withDeadline(applied);
  }

  private Duration capped(Duration timeout) {
    return maxTimeout != null && maxTimeout.compareTo(timeout) < 0 ? maxTimeout : timeout;
  }

  private static long saturatedNanos(Duration d) {
    try {
      return d.toNanos();
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE;
    }
  }

  @Override
  public String toString() {
    return "DeadlinePolicy{defaultTimeout="
        + (defaultTimeout == null ? "none (strict)" : defaultTimeout)
        + ", maxTimeout="
        + (maxTimeout == null ? "none" : maxTimeout)
        + "}";
  }

  /** Builds a {@link DeadlinePolicy}; not thread-safe. */
  public static final class Builder {
    private Duration defaultTimeout;
    private Duration maxTimeout;

    private Builder() {}

    /** The timeout of unary calls that arrive without a deadline (must be positive); default: none. */
    public Builder defaultTimeout(Duration timeout) {
      this.defaultTimeout = Checks.positive(timeout, "defaultTimeout");
      return this;
    }

    /** Refuse unary calls without a deadline ({@code missing TTL}), as yarpc-go does; the default. */
    public Builder requireDeadline() {
      this.defaultTimeout = null;
      return this;
    }

    /** The furthest deadline any call may have (must be positive); default: no cap. */
    public Builder maxTimeout(Duration timeout) {
      this.maxTimeout = Checks.positive(timeout, "maxTimeout");
      return this;
    }

    /** The policy. */
    public DeadlinePolicy build() {
      return defaultTimeout == null && maxTimeout == null
          ? STRICT
          : new DeadlinePolicy(defaultTimeout, maxTimeout);
    }
  }
}
