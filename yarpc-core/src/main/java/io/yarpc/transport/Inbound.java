package io.yarpc.transport;

/**
 * Receives calls from the network, turns them into {@link Request}s or {@link ServerStream}s, and serves
 * them through the {@link Router} it was given. It maps a returned {@link Response} or
 * {@link io.yarpc.errors.YarpcException} back to its wire protocol, and it releases the response bodies it
 * writes.
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
}
