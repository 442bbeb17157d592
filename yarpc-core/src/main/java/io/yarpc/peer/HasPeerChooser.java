package io.yarpc.peer;

/**
 * A capability of an outbound: it picks the peer of each call with a {@link PeerChooser}. Introspection
 * ({@link io.yarpc.Dispatcher#introspect()}, the admin page) shows the peers of outbounds that implement
 * it; an outbound without it is shown without peers. The outbounds of the HTTP, gRPC and TChannel
 * transports implement it.
 */
public interface HasPeerChooser {
  /** The chooser that picks the peer of each call; not null. Thread-safe; must not block. */
  PeerChooser chooser();
}
