package io.yarpc.peer;

/**
 * A transport that owns peers, reference-counted by subscribers: the first retain of an identifier
 * creates the peer (and may start connecting), the last release closes it.
 */
public interface PeerTransport {
  /** Retains the peer for {@code identifier} on behalf of {@code subscriber}. */
  Peer retainPeer(String identifier, PeerSubscriber subscriber);

  /** Releases what {@link #retainPeer} retained for {@code subscriber}. */
  void releasePeer(String identifier, PeerSubscriber subscriber);
}
