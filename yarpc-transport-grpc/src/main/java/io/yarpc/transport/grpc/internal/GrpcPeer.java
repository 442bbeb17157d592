package io.yarpc.transport.grpc.internal;

import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.yarpc.peer.AbstractPeer;
import io.yarpc.peer.ConnectionStatus;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * One remote address and the grpc-java {@link ManagedChannel} to it. The transport creates it on the first
 * retain of its identifier and counts retains per subscriber; the last release shuts the channel down.
 *
 * <p>Status mirrors the channel's connectivity (docs/spec/wire-grpc.md §4.5): {@code READY} is
 * {@link ConnectionStatus#AVAILABLE}, {@code CONNECTING} is {@link ConnectionStatus#CONNECTING}, anything
 * else {@link ConnectionStatus#UNAVAILABLE}; an idle channel is asked to connect, so a retained peer
 * becomes available without waiting for a first call. Subscribers hear about every status change.
 */
public final class GrpcPeer extends AbstractPeer {
  private final ManagedChannel channel;
  private final Consumer<GrpcPeer> onClose;
  private volatile ConnectionStatus status = ConnectionStatus.UNAVAILABLE;
  private volatile boolean shutdown;

  /**
   * A peer for {@code identifier} that owns {@code channel}; {@code onClose} hears when the peer was
   * closed (its channel may still be finishing calls).
   */
  public GrpcPeer(String identifier, ManagedChannel channel, Consumer<GrpcPeer> onClose) {
    super(identifier);
    this.channel = channel;
    this.onClose = onClose;
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
    synchronized (this) {
      if (status == next) {
        return;
      }
      status = next;
    }
    notifySubscribers();
  }

  /** Stops the peer: in-flight calls finish, new calls fail; the status becomes unavailable. */
  @Override
  public void close() {
    shutdown = true;
    channel.shutdown();
    update(ConnectionStatus.UNAVAILABLE);
    onClose.accept(this);
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
}
