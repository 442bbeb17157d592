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
}
