package io.yarpc.peer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * In-test {@link PeerTransport}: peers are plain objects whose status a test sets; retains and releases are
 * counted per (identifier, subscriber) so tests can check that every retain is released exactly once.
 */
final class FakePeerTransport implements PeerTransport {
  /** A peer whose status the test controls. */
  static final class FakePeer implements Peer {
    private final String identifier;
    private volatile ConnectionStatus status;
    final java.util.concurrent.atomic.AtomicInteger connectNowCalls =
        new java.util.concurrent.atomic.AtomicInteger();
    volatile String unavailableReason;

    FakePeer(String identifier, ConnectionStatus status) {
      this.identifier = identifier;
      this.status = status;
    }

    @Override
    public String identifier() {
      return identifier;
    }

    @Override
    public ConnectionStatus status() {
      return status;
    }

    @Override
    public void connectNow() {
      connectNowCalls.incrementAndGet();
    }

    @Override
    public String unavailableReason() {
      return unavailableReason;
    }

    @Override
    public String toString() {
      return "FakePeer{" + identifier + ", " + status + "}";
    }
  }

  private final Map<String, FakePeer> peers = new ConcurrentHashMap<>();
  private final Map<String, List<PeerSubscriber>> subscribers = new HashMap<>(); // guarded by this
  private final Map<String, Integer> retains = new HashMap<>(); // guarded by this
  private final Map<String, Integer> releases = new HashMap<>(); // guarded by this
  private final List<String> errors = new ArrayList<>(); // guarded by this
  private final ConnectionStatus initialStatus;

  FakePeerTransport() {
    this(ConnectionStatus.AVAILABLE);
  }

  FakePeerTransport(ConnectionStatus initialStatus) {
    this.initialStatus = initialStatus;
  }

  /** The peer for {@code id}, created with the initial status when new. */
  FakePeer peer(String id) {
    return peers.computeIfAbsent(id, i -> new FakePeer(i, initialStatus));
  }

  /** Sets the status of {@code id}'s peer without notifying anyone (for setting up a test). */
  void initialStatus(String id, ConnectionStatus status) {
    peer(id).status = status;
  }

  @Override
  public synchronized Peer retainPeer(String identifier, PeerSubscriber subscriber) {
    List<PeerSubscriber> subs = subscribers.computeIfAbsent(identifier, i -> new ArrayList<>());
    if (subs.contains(subscriber)) {
      errors.add("retained twice by the same subscriber: " + identifier);
    }
    subs.add(subscriber);
    retains.merge(identifier, 1, Integer::sum);
    return peer(identifier);
  }

  @Override
  public synchronized void releasePeer(String identifier, PeerSubscriber subscriber) {
    List<PeerSubscriber> subs = subscribers.get(identifier);
    if (subs == null || !subs.remove(subscriber)) {
      errors.add("released without a retain: " + identifier);
    }
    releases.merge(identifier, 1, Integer::sum);
  }

  /** Sets the status and notifies the current subscribers of that peer (outside the transport's lock). */
  void setStatus(String id, ConnectionStatus status) {
    FakePeer peer = peer(id);
    peer.status = status;
    List<PeerSubscriber> subs;
    synchronized (this) {
      subs = new ArrayList<>(subscribers.getOrDefault(id, List.of()));
    }
    for (PeerSubscriber s : subs) {
      s.onStatusChanged(peer);
    }
  }

  synchronized int retainCount(String id) {
    return retains.getOrDefault(id, 0);
  }

  synchronized int releaseCount(String id) {
    return releases.getOrDefault(id, 0);
  }

  /** How many retains are not released yet, over all peers. */
  synchronized int outstandingRetains() {
    return subscribers.values().stream().mapToInt(List::size).sum();
  }

  /** Unbalanced calls seen so far (double retain by one subscriber, release without retain). */
  synchronized List<String> errors() {
    return new ArrayList<>(errors);
  }
}
