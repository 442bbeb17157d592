package io.yarpc.transport.grpc.internal;

import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.yarpc.peer.ConnectionStatus;
import io.yarpc.peer.Peer;
import io.yarpc.peer.PeerSubscriber;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One remote address and the grpc-java {@link ManagedChannel} to it. The transport creates it on the first
 * retain of its identifier and counts retains per subscriber; the last release shuts the channel down.
 *
 * <p>Status mirrors the channel's connectivity (spec: wire-grpc 4.5): {@code READY} is
 * {@link ConnectionStatus#AVAILABLE}, {@code CONNECTING} is {@link ConnectionStatus#CONNECTING}, anything
 * else {@link ConnectionStatus#UNAVAILABLE}; an idle channel is asked to connect, so a retained peer
 * becomes available without waiting for a first call. Subscribers hear about every status change.
 */
public final class GrpcPeer implements Peer {
  private final String identifier;
  private final ManagedChannel channel;
  private final Map<PeerSubscriber, int[]> subscribers = new IdentityHashMap<>(); // guarded by this
  private volatile ConnectionStatus status = ConnectionStatus.UNAVAILABLE;
  private volatile boolean shutdown;

  /** A peer for {@code identifier} that owns {@code channel}. */
  public GrpcPeer(String identifier, ManagedChannel channel) {
    this.identifier = identifier;
    this.channel = channel;
  }

  @Override
  public String identifier() {
    return identifier;
  }

  @Override
  public ConnectionStatus status() {
    return status;
  }

  /** The channel calls to this peer go through. */
  public ManagedChannel channel() {
    return channel;
  }

  /** Starts following the channel's connectivity, asking it to connect. */
  public void watch() {
    onStateChange();
  }

  private void onStateChange() {
    if (shutdown) {
      return;
    }
    ConnectivityState state = channel.getState(true); // an idle channel starts connecting
    update(map(state));
    if (state != ConnectivityState.SHUTDOWN) {
      channel.notifyWhenStateChanged(state, this::onStateChange);
    }
  }

  private static ConnectionStatus map(ConnectivityState state) {
    switch (state) {
      case READY:
        return ConnectionStatus.AVAILABLE;
      case CONNECTING:
        return ConnectionStatus.CONNECTING;
      default:
        return ConnectionStatus.UNAVAILABLE;
    }
  }

  private void update(ConnectionStatus next) {
    List<PeerSubscriber> toNotify;
    synchronized (this) {
      if (status == next) {
        return;
      }
      status = next;
      toNotify = new ArrayList<>(subscribers.keySet());
    }
    for (PeerSubscriber s : toNotify) {
      try {
        s.onStatusChanged(this);
      } catch (RuntimeException ignored) {
        // one subscriber's failure must not keep the others uninformed
      }
    }
  }

  /** Counts a retain by {@code subscriber}. */
  public synchronized void retain(PeerSubscriber subscriber) {
    subscribers.computeIfAbsent(subscriber, s -> new int[1])[0]++;
  }

  /**
   * Counts a release by {@code subscriber}; returns whether no subscriber is left.
   *
   * @throws IllegalArgumentException when {@code subscriber} holds no retain
   */
  public synchronized boolean release(PeerSubscriber subscriber) {
    int[] count = subscribers.get(subscriber);
    if (count == null) {
      throw new IllegalArgumentException("peer " + identifier + " is not retained by " + subscriber);
    }
    if (--count[0] == 0) {
      subscribers.remove(subscriber);
    }
    return subscribers.isEmpty();
  }

  /** Stops the peer: in-flight calls finish, new calls fail; the status becomes unavailable. */
  public void shutdown() {
    shutdown = true;
    channel.shutdown();
    update(ConnectionStatus.UNAVAILABLE);
  }

  /** Whether the channel has shut down and finished every call. */
  public boolean isTerminated() {
    return channel.isTerminated();
  }

  /** Waits (at most {@code nanos}) for the channel to terminate, then forces it down. */
  public void awaitTermination(long nanos) throws InterruptedException {
    if (!channel.awaitTermination(nanos, TimeUnit.NANOSECONDS)) {
      channel.shutdownNow();
      channel.awaitTermination(1, TimeUnit.SECONDS);
    }
  }

  @Override
  public String toString() {
    return "GrpcPeer{" + identifier + ", " + status + "}";
  }
}
