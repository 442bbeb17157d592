package io.yarpc.peer;

import io.yarpc.internal.Checks;
import io.yarpc.internal.GoDurations;
import java.time.Duration;

/**
 * When a peer list takes a failing peer out of rotation ({@link AbstractPeerList.Builder#outlierDetection
 * outlier ejection}), for how long, and how many peers it may hold out at once. The settings and their
 * defaults are Envoy's outlier detection and grpc-java's {@code outlier_detection} policy; the return
 * through one probe call is Finagle's failure accrual. Immutable.
 *
 * <p><b>What counts.</b> Each call's outcome reaches the list when the outbound {@linkplain
 * PeerLease#finish finishes} its lease. A <em>failure</em> is an error whose code is the server's fault
 * ({@link io.yarpc.errors.Code#faultType()}: {@code unknown}, {@code deadline-exceeded}, {@code internal},
 * {@code unavailable}, {@code data-loss}), which includes a connection that could not be opened, any
 * error that is not a YARPC error, and a call cut off because its deadline passed. Any other answer — a
 * success, an application error, an error that is the caller's fault ({@code invalid-argument}, {@code
 * not-found}...) — shows the peer is serving and counts as a success. A call its caller cancelled, or
 * one {@linkplain PeerLease#abandon() given up} before it was sent, counts as nothing.
 *
 * <p><b>Ejection.</b> A peer is ejected after {@link Builder#consecutiveFailures consecutiveFailures}
 * failures in a row, or — when {@link Builder#failurePercent failurePercent} is set — once at least
 * {@link Builder#minRequests minRequests} of its calls ended within the current {@link Builder#interval
 * interval} and that percentage of them failed. It stays out of rotation for {@link
 * Builder#baseEjectionTime baseEjectionTime} times the number of times it was ejected, at most {@link
 * Builder#maxEjectionTime maxEjectionTime}; each interval a peer spends in rotation takes one off that
 * number.
 *
 * <p><b>Probation.</b> When its time is up the peer returns to rotation on probation: the next call
 * chosen for it is a probe, and the peer leaves rotation again until the probe ends. A successful probe
 * restores the peer; a failed one ejects it again for longer; a probe that counts as nothing (cancelled)
 * puts it back on probation.
 *
 * <p><b>Limits.</b> A list holds out (ejected or on probation) at most {@link Builder#maxEjectionPercent
 * maxEjectionPercent} of its peers, at least one, and never ejects the last peer in rotation: a peer
 * that trips the detector beyond those limits stays in rotation. A peer that is held out shows in
 * introspection ({@link PeerChooser#introspect()}, the admin page) as {@link
 * ConnectionStatus#UNAVAILABLE} with the reason, e.g. {@code ejected for 30s after 5 consecutive
 * failures (last: unavailable: ...); probation in 12s}.
 */
public final class OutlierDetection {
  /** Failures in a row that eject a peer unless the builder says otherwise, as Envoy and Finagle. */
  public static final int DEFAULT_CONSECUTIVE_FAILURES = 5;

  /** The smallest number of calls in an interval for {@code failurePercent} to apply, as Envoy's. */
  public static final int DEFAULT_MIN_REQUESTS = 50;

  /** The window of {@code failurePercent} and the step of the decay, as Envoy and grpc-java. */
  public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(10);

  /** The first ejection's length, as Envoy and grpc-java. */
  public static final Duration DEFAULT_BASE_EJECTION_TIME = Duration.ofSeconds(30);

  /** The longest ejection, as Envoy and grpc-java (or the base ejection time, when that is longer). */
  public static final Duration DEFAULT_MAX_EJECTION_TIME = Duration.ofMinutes(5);

  /** The share of a list's peers that may be held out at once, as Envoy and grpc-java. */
  public static final int DEFAULT_MAX_EJECTION_PERCENT = 10;

  private final int consecutiveFailures;
  private final int failurePercent;
  private final int minRequests;
  private final Duration interval;
  private final Duration baseEjectionTime;
  private final Duration maxEjectionTime;
  private final int maxEjectionPercent;

  private OutlierDetection(Builder b) {
    this.consecutiveFailures = b.consecutiveFailures;
    this.failurePercent = b.failurePercent;
    this.minRequests = b.minRequests;
    this.interval = b.interval;
    this.baseEjectionTime = b.baseEjectionTime;
    this.maxEjectionTime =
        b.maxEjectionTime != null
            ? b.maxEjectionTime
            : max(DEFAULT_MAX_EJECTION_TIME, b.baseEjectionTime);
    this.maxEjectionPercent = b.maxEjectionPercent;
  }

  /** A builder with the defaults: 5 consecutive failures, no failure percentage. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The defaults: eject after 5 consecutive failures for 30 s times the ejections (decaying by one
   * every 10 s in rotation), at most 5 min; at most 10 % of the peers (at least one) held out.
   */
  public static OutlierDetection defaults() {
    return builder().build();
  }

  /** Failures in a row that eject a peer; 0 when only {@link #failurePercent()} ejects. */
  public int consecutiveFailures() {
    return consecutiveFailures;
  }

  /** The percentage of failed calls in an interval that ejects a peer; 0 when off. */
  public int failurePercent() {
    return failurePercent;
  }

  /** The calls an interval needs before {@link #failurePercent()} applies. */
  public int minRequests() {
    return minRequests;
  }

  /** The window of {@link #failurePercent()}, and the time in rotation that takes one ejection off. */
  public Duration interval() {
    return interval;
  }

  /** The first ejection's length; the n-th lasts n times as long, at most {@link #maxEjectionTime()}. */
  public Duration baseEjectionTime() {
    return baseEjectionTime;
  }

  /** The longest ejection. */
  public Duration maxEjectionTime() {
    return maxEjectionTime;
  }

  /** The share of a list's peers (at least one) that may be held out at once. */
  public int maxEjectionPercent() {
    return maxEjectionPercent;
  }

  @Override
  public String toString() {
    return "OutlierDetection{consecutiveFailures="
        + consecutiveFailures
        + ", failurePercent="
        + failurePercent
        + ", minRequests="
        + minRequests
        + ", interval="
        + GoDurations.format(interval)
        + ", baseEjectionTime="
        + GoDurations.format(baseEjectionTime)
        + ", maxEjectionTime="
        + GoDurations.format(maxEjectionTime)
        + ", maxEjectionPercent="
        + maxEjectionPercent
        + "}";
  }

  private static Duration max(Duration a, Duration b) {
    return a.compareTo(b) >= 0 ? a : b;
  }

  /** Builds an {@link OutlierDetection}; the defaults are in each setter's comment. Not thread-safe. */
  public static final class Builder {
    private int consecutiveFailures = DEFAULT_CONSECUTIVE_FAILURES;
    private int failurePercent;
    private int minRequests = DEFAULT_MIN_REQUESTS;
    private Duration interval = DEFAULT_INTERVAL;
    private Duration baseEjectionTime = DEFAULT_BASE_EJECTION_TIME;
    private Duration maxEjectionTime; // null: the default or baseEjectionTime, the longer
    private int maxEjectionPercent = DEFAULT_MAX_EJECTION_PERCENT;

    private Builder() {}

    /** Failures in a row that eject a peer, 0 (off) or more; default 5. */
    public Builder consecutiveFailures(int failures) {
      if (failures < 0) {
        throw new IllegalArgumentException("consecutiveFailures must not be negative: " + failures);
      }
      this.consecutiveFailures = failures;
      return this;
    }

    /**
     * The percentage of an interval's calls that ejects a peer when they fail, from 1 to 100, or 0 (off);
     * default 0. It applies once {@link #minRequests} calls ended in the interval.
     */
    public Builder failurePercent(int percent) {
      if (percent < 0 || percent > 100) {
        throw new IllegalArgumentException("failurePercent must be from 0 to 100: " + percent);
      }
      this.failurePercent = percent;
      return this;
    }

    /** The calls an interval needs before {@link #failurePercent} applies, 1 or more; default 50. */
    public Builder minRequests(int requests) {
      if (requests < 1) {
        throw new IllegalArgumentException("minRequests must be at least 1: " + requests);
      }
      this.minRequests = requests;
      return this;
    }

    /**
     * The window over which {@link #failurePercent} counts, and the time in rotation that takes one
     * ejection off a peer's count; positive, default 10 s.
     */
    public Builder interval(Duration interval) {
      this.interval = Checks.positive(interval, "interval");
      return this;
    }

    /** The first ejection's length; positive, default 30 s. */
    public Builder baseEjectionTime(Duration time) {
      this.baseEjectionTime = Checks.positive(time, "baseEjectionTime");
      return this;
    }

    /**
     * The longest ejection; positive and not shorter than {@link #baseEjectionTime}; default 5 min, or
     * the base ejection time when that is longer.
     */
    public Builder maxEjectionTime(Duration time) {
      this.maxEjectionTime = Checks.positive(time, "maxEjectionTime");
      return this;
    }

    /**
     * The share of the list's peers that may be held out at once, from 1 to 100; default 10. At least one
     * peer may always be ejected, and never the last one in rotation.
     */
    public Builder maxEjectionPercent(int percent) {
      if (percent < 1 || percent > 100) {
        throw new IllegalArgumentException("maxEjectionPercent must be from 1 to 100: " + percent);
      }
      this.maxEjectionPercent = percent;
      return this;
    }

    /**
     * The settings. Throws {@link IllegalArgumentException} when both {@code consecutiveFailures} and
     * {@code failurePercent} are 0 (nothing would eject), or when {@code maxEjectionTime} is shorter than
     * {@code baseEjectionTime}.
     */
    public OutlierDetection build() {
      if (consecutiveFailures == 0 && failurePercent == 0) {
        throw new IllegalArgumentException(
            "outlier detection needs consecutiveFailures or failurePercent: both are 0");
      }
      if (maxEjectionTime != null && maxEjectionTime.compareTo(baseEjectionTime) < 0) {
        throw new IllegalArgumentException(
            "maxEjectionTime ("
                + GoDurations.format(maxEjectionTime)
                + ") must not be shorter than baseEjectionTime ("
                + GoDurations.format(baseEjectionTime)
                + ")");
      }
      return new OutlierDetection(this);
    }
  }
}
