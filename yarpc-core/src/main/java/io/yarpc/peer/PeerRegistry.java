package io.yarpc.peer;

import static java.util.Objects.requireNonNull;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The peers a {@link PeerTransport} owns, one per identifier: created on the first retain, closed on the
 * last release. Transports implement {@link PeerTransport#retainPeer} and {@link
 * PeerTransport#releasePeer} by delegating here. Thread-safe.
 *
 * @param <P> the transport's peer type
 */
public final class PeerRegistry<P extends AbstractPeer> {
  private final Function<String, P> factory;
  private final Consumer<P> onFirstRetain;
  private final Map<String, P> peers = new LinkedHashMap<>(); // guarded by itself

  /**
   * A registry that makes peers with {@code factory} (called under the registry's lock, so it must be
   * quick; it may throw to refuse, e.g. when the transport stopped) and calls {@code onFirstRetain}
   * outside the lock when a peer gets its first subscriber (e.g. to start connecting).
   */
  public PeerRegistry(Function<String, P> factory, Consumer<P> onFirstRetain) {
    this.factory = requireNonNull(factory, "factory");
    this.onFirstRetain = requireNonNull(onFirstRetain, "onFirstRetain");
  }

  /** Retains the peer for {@code identifier} on behalf of {@code subscriber}, creating it if needed. */
  public P retain(String identifier, PeerSubscriber subscriber) {
    requireNonNull(identifier, "identifier");
    requireNonNull(subscriber, "subscriber");
    P peer;
    boolean first;
    synchronized (peers) {
      peer = peers.get(identifier);
      if (peer == null) {
        peer = requireNonNull(factory.apply(identifier), "peer factory returned null");
        peers.put(identifier, peer);
      }
      first = peer.retain(subscriber);
    }
    if (first) {
      onFirstRetain.accept(peer);
    }
    return peer;
  }

  /**
   * Releases one retain of {@code identifier} by {@code subscriber}; the last release removes the peer,
   * marks it released (no call through it begins any more: see {@link AbstractPeer}) and closes it once no
   * call is beginning on it.
   *
   * @throws IllegalArgumentException when {@code subscriber} does not retain that peer
   */
  public void release(String identifier, PeerSubscriber subscriber) {
    requireNonNull(identifier, "identifier");
    requireNonNull(subscriber, "subscriber");
    P peer;
    synchronized (peers) {
      peer = peers.get(identifier);
      if (peer == null) {
        throw new IllegalArgumentException("peer " + identifier + " is not retained");
      }
      if (!peer.release(subscriber)) {
        return;
      }
      peers.remove(identifier);
    }
    peer.releaseAndClose();
  }

  /** The retained peer for {@code identifier}, or {@code null}. */
  public P get(String identifier) {
    synchronized (peers) {
      return peers.get(identifier);
    }
  }

  /** The retained peers, in the order they were first retained. */
  public List<P> peers() {
    synchronized (peers) {
      return List.copyOf(peers.values());
    }
  }

  /** Removes every peer and releases it as {@link #release} does (for a transport's stop). */
  public void closeAll() {
    List<P> all;
    synchronized (peers) {
      all = List.copyOf(peers.values());
      peers.clear();
    }
    all.forEach(AbstractPeer::releaseAndClose);
  }
}
