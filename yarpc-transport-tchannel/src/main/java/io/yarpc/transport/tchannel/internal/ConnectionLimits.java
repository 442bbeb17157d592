package io.yarpc.transport.tchannel.internal;

import io.yarpc.transport.DeadlinePolicy;
import io.yarpc.transport.InboundLimits;

/**
 * What one connection enforces against its peer, by role: a connection an inbound accepted follows the
 * inbound's {@link InboundLimits} ({@link #accepted}); a connection the transport dialled follows the
 * transport's builder ({@link #dialled}).
 *
 * @param maxInFlightCalls the most calls the peer may have being received or handled at once; beyond it
 *     a call req is answered with busy
 * @param maxRequestBytes the most arg bytes one call req message may carry; beyond it bad request
 *     ({@link ProtocolException#tooLarge})
 * @param maxHeaderCount the most headers (transport headers and application headers together) one call
 *     may carry; beyond it bad request
 * @param maxHeaderBytes the most bytes arg2 (the application headers) may take; beyond it bad request, as
 *     soon as arg2 grows past it and before anything is decoded
 * @param handshakeTimeoutNanos how long the init handshake may take; then the connection closes
 * @param readTimeoutNanos how long a call req message may take to arrive once its first frame has (a
 *     message still arriving after its ttl ends at its ttl, whichever comes first)
 * @param writeTimeoutNanos how long frames may wait to be written without any progress; then the
 *     connection closes; 0 for no limit
 * @param idleTimeoutNanos how long the connection may stay open with no call in flight; 0 for no limit
 * @param stopReadingWhenUnwritable whether the connection stops reading while its outbound buffer is over
 *     its high water mark (a peer that does not read cannot make it grow)
 * @param maxPendingBytes the bytes the messages being assembled other than the oldest may hold before
 *     another frame of theirs is refused with busy (see {@link IncomingCalls}; the oldest always goes
 *     on); {@link Long#MAX_VALUE} for no limit
 * @param pendingBudget the budget the inbound's connections share ({@link PendingBudget#UNLIMITED} for none)
 * @param deadlinePolicy applied to every call's deadline before it is handled
 */
public record ConnectionLimits(
    int maxInFlightCalls,
    long maxRequestBytes,
    int maxHeaderCount,
    int maxHeaderBytes,
    long handshakeTimeoutNanos,
    long readTimeoutNanos,
    long writeTimeoutNanos,
    long idleTimeoutNanos,
    boolean stopReadingWhenUnwritable,
    long maxPendingBytes,
    PendingBudget pendingBudget,
    DeadlinePolicy deadlinePolicy) {

  /** The limits of a connection an inbound accepted. */
  public static ConnectionLimits accepted(
      InboundLimits limits, DeadlinePolicy deadlinePolicy, PendingBudget pendingBudget) {
    return new ConnectionLimits(
        limits.maxConcurrentCallsPerConnectionOr(
            InboundLimits.DEFAULT_TCHANNEL_CONCURRENT_CALLS_PER_CONNECTION),
        limits.maxRequestSize(),
        limits.maxHeaderCount(),
        limits.maxHeaderBytes(),
        nanos(limits.handshakeTimeout()),
        nanos(limits.readTimeout()),
        nanos(limits.writeTimeout()),
        nanos(limits.idleTimeout()),
        true,
        limits.maxPendingBytesPerConnection(),
        pendingBudget,
        deadlinePolicy);
  }

  /**
   * The limits of a connection the transport dialled: the transport's in-flight, message size and
   * handshake settings, the default header limits and read timeout of {@link InboundLimits} (they cost
   * a well-behaved peer nothing), yarpc-go's strict deadline rule, and none of the connection-level limits
   * (the peer that owns the connection manages it; a connection that stopped reading while the remote
   * side does the same could deadlock).
   */
  public static ConnectionLimits dialled(
      int maxInFlightCalls, long maxMessageBytes, long handshakeTimeoutNanos) {
    InboundLimits defaults = InboundLimits.defaults();
    return new ConnectionLimits(
        maxInFlightCalls,
        maxMessageBytes,
        defaults.maxHeaderCount(),
        defaults.maxHeaderBytes(),
        handshakeTimeoutNanos,
        nanos(defaults.readTimeout()),
        0,
        0,
        false,
        Long.MAX_VALUE,
        PendingBudget.UNLIMITED,
        DeadlinePolicy.strict());
  }

  private static long nanos(java.time.Duration d) {
    try {
      return d.toNanos();
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE;
    }
  }
}
