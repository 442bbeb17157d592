package io.yarpc.peer;

/** Told by a {@link PeerTransport} when a retained peer's status changes. */
@FunctionalInterface
public interface PeerSubscriber {
  /** {@code peer}'s {@link Peer#status()} changed; may be called from any thread. */
  void onStatusChanged(Peer peer);
}
