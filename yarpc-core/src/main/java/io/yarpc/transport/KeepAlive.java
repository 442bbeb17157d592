package io.yarpc.transport;

import io.yarpc.internal.Checks;
import java.time.Duration;
import java.util.Objects;

/**
 * Keepalive pings on the connections a transport dials to its peers: how the calling side tells a
 * silently dead connection (a peer host that vanished without closing it, a network path that drops
 * everything) from a quiet one. Each transport's builder takes one through {@code keepAlive(...)}; every
 * transport's keepalive is off by default, as in grpc-java, grpc-go and yarpc-go. One call turns it on:
 *
 * <pre>{@code
 * GrpcTransport grpc = GrpcTransport.builder().keepAlive(KeepAlive.every(Duration.ofSeconds(30))).build();
 * }</pre>
 *
 * <p><b>The rule every transport follows.</b> A connection on which nothing has arrived for {@link
 * #time()} gets a ping, but only while it carries calls unless {@link #withoutCalls()}; anything that
 * arrives, the answer or other bytes, counts as a sign of life. When nothing has arrived {@link
 * #timeout()} after the ping, the connection is closed: the calls in flight on it fail at once with
 * {@code unavailable} (rather than at their deadlines), its peer stops being available, so peer lists
 * choose other peers, and the transport reconnects with its usual backoff. What a ping is:
 *
 * <ul>
 *   <li>gRPC: grpc-java's keepalive, an HTTP/2 {@code PING}. grpc-java raises a time under 10 s to 10 s
 *       and a timeout under 10 ms to 10 ms.
 *   <li>HTTP over h2c (and h2): an HTTP/2 {@code PING} frame.
 *   <li>HTTP/1.1: a connection that carries a call cannot carry a ping, so the peer is asked on a
 *       connection of its own: {@code OPTIONS * HTTP/1.1} (RFC 9110, section 9.3.7), which any server answers. The
 *       same question, answered within the timeout, is what makes the peer available again.
 *   <li>TChannel: a {@code ping req} frame (docs/spec/wire-tchannel.md §5.4).
 * </ul>
 *
 * <p><b>Servers must let clients ping.</b> yarpc-java's inbounds answer pings on every transport. gRPC
 * servers police them: yarpc-java's gRPC inbound, like grpc-java's and grpc-go's servers, closes a
 * connection that pings more often than its {@link InboundLimits.Builder#permitKeepAliveTime
 * permitKeepAliveTime} (default 5 min), or while it has no calls unless {@link
 * InboundLimits.Builder#permitKeepAliveWithoutCalls permitKeepAliveWithoutCalls}, with {@code
 * GOAWAY(ENHANCE_YOUR_CALM, "too_many_pings")}: give gRPC servers a permitted time no longer than their
 * clients' keepalive time.
 *
 * <p>Immutable and thread-safe.
 */
public final class KeepAlive {
  /** The default of {@link Builder#time}: 10 s, yarpc-go's for a {@code grpc-keepalive} block. */
  public static final Duration DEFAULT_TIME = Duration.ofSeconds(10);

  /** The default of {@link Builder#timeout}: 20 s, grpc-java's and grpc-go's. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(20);

  private final Duration time;
  private final Duration timeout;
  private final boolean withoutCalls;

  private KeepAlive(Builder b) {
    this.time = b.time;
    this.timeout = b.timeout;
    this.withoutCalls = b.withoutCalls;
  }

  /**
   * Pings after {@code time} without anything received, with the default timeout (20 s), only while
   * calls are in flight.
   *
   * @throws IllegalArgumentException when {@code time} is not positive
   */
  public static KeepAlive every(Duration time) {
    return builder().time(time).build();
  }

  /** A builder holding the defaults: time 10 s, timeout 20 s, no pings without calls. */
  public static Builder builder() {
    return new Builder();
  }

  /** A builder holding these settings. */
  public Builder toBuilder() {
    return new Builder().time(time).timeout(timeout).withoutCalls(withoutCalls);
  }

  /** How long a connection may receive nothing before it is pinged. */
  public Duration time() {
    return time;
  }

  /** How long after a ping something must have arrived, or the connection is closed. */
  public Duration timeout() {
    return timeout;
  }

  /** Whether connections without calls in flight are pinged too. */
  public boolean withoutCalls() {
    return withoutCalls;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof KeepAlive k
        && time.equals(k.time)
        && timeout.equals(k.timeout)
        && withoutCalls == k.withoutCalls;
  }

  @Override
  public int hashCode() {
    return Objects.hash(time, timeout, withoutCalls);
  }

  @Override
  public String toString() {
    return "KeepAlive{time="
        + time
        + ", timeout="
        + timeout
        + ", withoutCalls="
        + withoutCalls
        + "}";
  }

  /** Builds a {@link KeepAlive}; not thread-safe. */
  public static final class Builder {
    private Duration time = DEFAULT_TIME;
    private Duration timeout = DEFAULT_TIMEOUT;
    private boolean withoutCalls;

    private Builder() {}

    /**
     * How long a connection may receive nothing before it is pinged; default 10 s.
     *
     * @throws IllegalArgumentException when not positive
     */
    public Builder time(Duration time) {
      this.time = Checks.positive(time, "time");
      return this;
    }

    /**
     * How long after a ping something must arrive before the connection is given up; default 20 s.
     *
     * @throws IllegalArgumentException when not positive
     */
    public Builder timeout(Duration timeout) {
      this.timeout = Checks.positive(timeout, "timeout");
      return this;
    }

    /**
     * Whether connections that carry no call are pinged too (default false, as grpc-java's {@code
     * keepAliveWithoutCalls}): then an idle peer that died is noticed before a call is sent to it, at the
     * cost of a ping per connection every {@code time}. gRPC servers must permit it (see the class
     * comment).
     */
    public Builder withoutCalls(boolean withoutCalls) {
      this.withoutCalls = withoutCalls;
      return this;
    }

    /** The settings. */
    public KeepAlive build() {
      return new KeepAlive(this);
    }
  }
}
