package io.yarpc.peer;

import static java.util.Objects.requireNonNull;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.peer.internal.CountedLease;
import io.yarpc.transport.AbstractLifecycle;
import io.yarpc.transport.RequestMeta;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A chooser for an outbound that always calls the same address ({@code peer: host:port} in yarpc-go).
 *
 * <p>Ownership: the {@link PeerTransport} owns the peer. This chooser retains it once at {@link #start()}
 * and releases that retain at {@link #stop()}; in between {@link #choose(RequestMeta)} returns it at once,
 * whatever its {@link ConnectionStatus} (it never waits: the transport reports a peer that cannot be reached
 * when the call is made). The caller owns each returned {@link PeerLease} and must
 * {@linkplain PeerLease#finish(Throwable) finish} it once; the chooser counts those that are not finished.
 *
 * <p>Thread-safe. {@code start} and {@code stop} are idempotent; a stopped chooser cannot start again.
 */
public final class SinglePeerChooser extends AbstractLifecycle implements PeerChooser {
  private final PeerTransport transport;
  private final String identifier;
  // A distinct object per chooser (not a shared non-capturing lambda): transports count retains per
  // subscriber.
  private final PeerSubscriber subscriber = new StatusIgnorer();
  private final AtomicInteger pending = new AtomicInteger();
  private volatile Peer peer;
  private volatile boolean stopped;
  private boolean retained; // guarded by this (start and stop are synchronized)

  private SinglePeerChooser(PeerTransport transport, String identifier) {
    this.transport = requireNonNull(transport, "transport");
    this.identifier = requireNonNull(identifier, "identifier");
    if (identifier.isEmpty()) {
      throw new IllegalArgumentException("identifier must not be empty");
    }
  }

  /**
   * A chooser for the peer called {@code identifier} (usually {@code host:port}) owned by {@code transport}.
   * Nothing is retained until {@link #start()}.
   */
  public static SinglePeerChooser of(PeerTransport transport, String identifier) {
    return new SinglePeerChooser(transport, identifier);
  }

  /** The identifier of the one peer this chooser returns. */
  public String identifier() {
    return identifier;
  }

  /** How many leases this chooser handed out that are not finished yet. */
  public int pendingRequests() {
    return pending.get();
  }

  /** Retains the peer from the transport; called once by {@link #start()}. */
  @Override
  protected void doStart() {
    Peer retainedPeer = transport.retainPeer(identifier, subscriber);
    retained = true;
    if (retainedPeer == null) {
      throw new IllegalStateException(transport + " returned no peer for " + identifier);
    }
    peer = retainedPeer;
  }

  /** Releases the retain taken by {@link #doStart()}, if any; called once by {@link #stop()}. */
  @Override
  protected void doStop() {
    stopped = true;
    peer = null;
    if (retained) {
      retained = false;
      transport.releasePeer(identifier, subscriber);
    }
  }

  /**
   * Returns a lease on the peer at once, whatever its status. Fails with {@link Code#UNAVAILABLE} before
   * {@link #start()} and after {@link #stop()}. The caller must finish the lease once.
   */
  @Override
  public CompletableFuture<PeerLease> choose(RequestMeta meta) {
    requireNonNull(meta, "meta");
    Peer current = peer;
    if (current == null) {
      return CompletableFuture.failedFuture(
          YarpcException.of(
              Code.UNAVAILABLE,
              "single peer chooser for \"%s\" %s",
              identifier,
              stopped ? "has been stopped" : "has not been started"));
    }
    return CompletableFuture.completedFuture(CountedLease.start(current, pending));
  }

  @Override
  public String toString() {
    return "SinglePeerChooser{" + identifier + "}";
  }

  /** Status changes do not matter to a chooser that always returns its one peer. */
  private static final class StatusIgnorer implements PeerSubscriber {
    @Override
    public void onStatusChanged(Peer changed) {}
  }
}
