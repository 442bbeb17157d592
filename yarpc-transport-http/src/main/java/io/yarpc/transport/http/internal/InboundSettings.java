package io.yarpc.transport.http.internal;

import io.yarpc.transport.DeadlinePolicy;
import io.yarpc.transport.InboundLimits;

/**
 * The limits and options of one HTTP inbound, fixed when it is built.
 *
 * @param limits what peers may send, how slowly and how often (see {@code HttpInbound}'s class comment for
 *     what each means on HTTP/1.1 and h2c)
 * @param http2 whether h2c (prior knowledge) is served next to HTTP/1.1
 * @param shutdownTimeoutNanos how long stop waits for in-flight requests
 * @param healthPath the path a {@code GET} or {@code HEAD} asks for the health status on, or {@code null}
 *     when the health check is off
 * @param deadlinePolicy what calls without a deadline, or with a distant one, are handled with
 */
public record InboundSettings(
    InboundLimits limits,
    boolean http2,
    long shutdownTimeoutNanos,
    String healthPath,
    DeadlinePolicy deadlinePolicy) {

  /** The largest request body accepted, in bytes (larger: 413). */
  public int maxRequestSize() {
    return limits.maxRequestSize();
  }

  /** How long receiving one request may take, from its first byte to its last (then 408). */
  public long readTimeoutNanos() {
    return limits.readTimeout().toNanos();
  }

  /** How long a response may go without any of it being written (then the connection or stream ends). */
  public long writeTimeoutNanos() {
    return limits.writeTimeout().toNanos();
  }

  /** How long a connection may stay open with no call in flight. */
  public long idleTimeoutNanos() {
    return limits.idleTimeout().toNanos();
  }
}
