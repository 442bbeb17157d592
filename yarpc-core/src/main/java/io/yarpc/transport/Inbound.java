package io.yarpc.transport;

import java.net.SocketAddress;

/**
 * Receives calls from the network, turns them into {@link Request}s or {@link ServerStream}s, and serves
 * them through the {@link Router} it was given. The contract:
 *
 * <ul>
 *   <li>It decodes the wire's metadata into a {@link RequestMeta} (an absent deadline stays null) and then
 *       takes core's inbound path ({@link InboundCalls}): routing, the call-type check,
 *       its {@link DeadlinePolicy}, a guarded handler call. It MUST NOT check deadlines, arm deadline
 *       timers or validate metadata again: the dispatcher's handlers do ({@code missing TTL}, the deadline,
 *       draining, error mapping).
 *   <li>It MAY call the handlers on its I/O threads: they never block (the dispatcher hops to its
 *       executor). A handler's future MAY complete on any thread.
 *   <li>The request body it hands to a handler is the invocation's (released when the handler's result
 *       completes); a body it never hands on it MUST release. It owns the body of every response it writes
 *       (and of a response attached to an error) and MUST release it exactly once, written or not.
 *   <li>It MUST answer every call it accepted: the response, or the error in its protocol's own form
 *       (never a dropped connection where the protocol has an error frame, never a Java class name or
 *       stack trace on the wire). When its caller goes away it MUST cancel the handler's future.
 *   <li>{@link #setRouter} is called before {@link #start()}; {@link #beginDrain()} when the dispatcher
 *       begins to stop; {@link #stop()} after calls drained (or the grace period passed).
 * </ul>
 */
public interface Inbound extends TransportComponent {
  /** Called by the dispatcher before {@link #start()}. */
  void setRouter(Router router);

  /**
   * Called by the dispatcher when its stop begins, before calls in flight drain (and before {@link #stop()}).
   * The inbound keeps serving the calls it has already accepted, but from then on reports not-serving to
   * health checks (gRPC health, an HTTP health path), so load balancers and probes take it out of rotation
   * while it drains. {@link #stop()} switches an inbound to not-serving too, whether or not this was called.
   * Must be idempotent and quick (it must not wait for calls); may be called from any thread. The default
   * does nothing, for inbounds without health reporting.
   */
  default void beginDrain() {}

  /**
   * The address the inbound listens on, for introspection ({@link io.yarpc.Dispatcher#introspect()}, the
   * admin page, logs): the bound address, with the actual port when it was built with port 0. Null before
   * {@link #start()} and for an inbound that does not listen on a socket; after {@link #stop()} it MAY
   * still tell the address it listened on. Must be thread-safe and must not block. The default returns
   * null, so inbounds written before this method keep compiling.
   */
  default SocketAddress listenAddress() {
    return null;
  }
}
