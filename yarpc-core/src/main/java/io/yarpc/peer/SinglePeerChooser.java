package io.yarpc.peer;

import static java.util.Objects.requireNonNull;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.Checks;
import io.yarpc.internal.Timers;
import io.yarpc.peer.internal.CountedLease;
import io.yarpc.peer.internal.NoPeerErrors;
import io.yarpc.peer.internal.Nudger;
import io.yarpc.peer.internal.PendingChoices;
import io.yarpc.peer.internal.Waiter;
import io.yarpc.transport.AbstractLifecycle;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.RequestMeta;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A chooser for an outbound that always calls the same address ({@code peer: host:port} in yarpc-go).
 *
 * <p>Choosing: while the peer is {@link ConnectionStatus#AVAILABLE}, {@link #choose(RequestMeta)} returns
 * it at once. Otherwise the choice waits, without blocking a thread, until the peer becomes available or
 * the call's deadline passes (or {@link Builder#defaultChooseTimeout} when the call has none), so a
 * client started before its server, or one whose server restarts, calls it as soon as it is up; while
 * calls wait the chooser asks the peer to {@linkplain Peer#connectNow() connect now} every 100 ms
 * instead of after its reconnect backoff. A wait that times out fails with {@link
 * Code#UNAVAILABLE} naming the peer and its {@linkplain Peer#unavailableReason() last connection
 * failure}; the call's own deadline error says the same ({@link #waitReason()}). With {@link
 * Builder#failFast(boolean) fail-fast} a choice never waits: it returns the peer whatever its status, and
 * the transport reports a peer that cannot be reached when the call is made.
 *
 * <p>Ownership: the {@link PeerTransport} owns the peer. This chooser retains it once at {@link #start()}
 * and releases that retain at {@link #stop()}. The caller owns each returned {@link PeerLease} and must
 * {@linkplain PeerLease#finish(Throwable) finish} it once; the chooser counts those that are not finished.
 *
 * <p>Thread-safe. {@code start} and {@code stop} are idempotent; a stopped chooser cannot start again. A
 * choice that had to wait completes on the thread that reported the peer available (usually the
 * transport's) or, on timeout, on the shared timer thread.
 */
public final class SinglePeerChooser extends AbstractLifecycle implements PeerChooser {
  /** The chooser's kind in introspection ({@link ChooserStatus#kind()}). */
  public static final String KIND = "single";

  private final PeerTransport transport;
  private final String identifier;
  private final boolean failFast;
  private final Duration defaultChooseTimeout;
  // A distinct object per chooser (not a shared lambda): transports count retains per subscriber.
  private final PeerSubscriber subscriber = changed -> serveWaiters();
  private final AtomicInteger pending = new AtomicInteger();
  private final LinkedHashSet<Waiter> waiters = new LinkedHashSet<>(); // guarded by itself; FIFO
  private final Nudger nudger = new Nudger(this::nudge);
  private volatile Peer peer;
  private volatile boolean stopped;
  private boolean retained; // guarded by this (start and stop are synchronized)

  private SinglePeerChooser(Builder b) {
    this.transport = b.transport;
    this.identifier = b.identifier;
    this.failFast = b.failFast;
    this.defaultChooseTimeout = b.defaultChooseTimeout;
  }

  /**
   * A waiting chooser (see the class comment) for the peer called {@code identifier} (usually {@code
   * host:port}) owned by {@code transport}. Nothing is retained until {@link #start()}.
   */
  public static SinglePeerChooser of(PeerTransport transport, String identifier) {
    return builder(transport, identifier).build();
  }

  /** A builder for a chooser of the peer {@code identifier} owned by {@code transport}. */
  public static Builder builder(PeerTransport transport, String identifier) {
    return new Builder(transport, identifier);
  }

  /** The identifier of the one peer this chooser returns. */
  public String identifier() {
    return identifier;
  }

  /** How many leases this chooser handed out that are not finished yet. */
  public int pendingRequests() {
    return pending.get();
  }

  /**
   * Kind {@value #KIND}; the one peer with its status, unavailable reason and {@linkplain
   * #pendingRequests() pending requests}. Before {@link #start()} and after {@link #stop()} the peer is
   * {@code UNAVAILABLE} with the reason that the chooser is not running.
   */
  @Override
  public ChooserStatus introspect() {
    Peer current = peer;
    PeerStatus status =
        current != null
            ? PeerStatus.of(current, pending.get())
            : new PeerStatus(
                identifier,
                ConnectionStatus.UNAVAILABLE,
                stopped ? "the chooser has been stopped" : "the chooser has not been started",
                pending.get());
    return new ChooserStatus(KIND, List.of(status));
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

  /**
   * Fails waiting choices with {@code unavailable} and releases the retain taken by {@link #doStart()},
   * if any; called once by {@link #stop()}.
   */
  @Override
  protected void doStop() {
    synchronized (waiters) { // a choice that registers after this sees `stopped` (see choose)
      stopped = true;
    }
    peer = null;
    for (Waiter w : takeWaiters()) {
      w.fail(
          YarpcException.of(
              Code.UNAVAILABLE,
              "single peer chooser for \"%s\" was stopped while waiting for the peer",
              identifier));
    }
    if (retained) {
      retained = false;
      transport.releasePeer(identifier, subscriber);
    }
  }

  /**
   * A lease on the peer: at once when it is available (or the chooser is fail-fast), else when it
   * becomes available; see the class comment. Fails with {@link Code#UNAVAILABLE} before {@link
   * #start()}, after {@link #stop()}, or when the peer does not become available in time. Cancelling the
   * returned future abandons the wait. The caller must finish the lease once.
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
    if (failFast || current.status() == ConnectionStatus.AVAILABLE) {
      return CompletableFuture.completedFuture(CountedLease.start(current, pending));
    }
    Deadline deadline =
        meta.deadline() != null ? meta.deadline() : Deadline.after(defaultChooseTimeout);
    long remaining = deadline.remainingNanos();
    if (remaining <= 0) {
      return CompletableFuture.failedFuture(unreachable(current, 0));
    }
    Waiter w = new Waiter(System.nanoTime());
    synchronized (waiters) {
      if (stopped) { // stop ran since `peer` was read: it failed the waiters it found
        return CompletableFuture.failedFuture(
            YarpcException.of(
                Code.UNAVAILABLE, "single peer chooser for \"%s\" has been stopped", identifier));
      }
      waiters.add(w);
      w.timeout =
          Timers.schedule(
              () -> timeOut(w),
              meta.deadline() != null ? remaining + PendingChoices.WAIT_GRACE_NANOS : remaining);
    }
    nudger.start();
    w.future.whenComplete(
        (lease, error) -> {
          if (error instanceof CancellationException) {
            abandon(w);
          }
        });
    // The peer may have become available between the status check and the registration.
    serveWaiters();
    return w.future;
  }

  /**
   * {@code peer <id> is unreachable: <last connection failure>} (or {@code is connecting}) while the peer
   * is not available, else null.
   */
  @Override
  public String waitReason() {
    Peer current = peer;
    if (current == null || current.status() == ConnectionStatus.AVAILABLE) {
      return null;
    }
    return describe(current);
  }

  private String describe(Peer p) {
    String reason = p.unavailableReason();
    if (reason != null) {
      return "peer " + identifier + " is unreachable: " + reason;
    }
    return "peer "
        + identifier
        + (p.status() == ConnectionStatus.CONNECTING ? " is still connecting" : " is unavailable");
  }

  private YarpcException unreachable(Peer p, long waitedNanos) {
    return YarpcException.of(
        Code.UNAVAILABLE,
        "%s (waited %s for it)",
        describe(p),
        NoPeerErrors.formatDuration(waitedNanos));
  }

  /** Hands the peer to every waiting choice once it is available. */
  private void serveWaiters() {
    Peer current = peer;
    if (current == null || current.status() != ConnectionStatus.AVAILABLE) {
      return;
    }
    for (Waiter w : takeWaiters()) {
      CountedLease lease = CountedLease.start(current, pending);
      w.cancelTimeout();
      if (!w.future.complete(lease)) {
        lease.abandon(); // the wait was abandoned in the meantime
      }
    }
  }

  private List<Waiter> takeWaiters() {
    synchronized (waiters) {
      List<Waiter> all = new ArrayList<>(waiters);
      waiters.clear();
      stopNudgingLocked();
      return all;
    }
  }

  private void timeOut(Waiter w) {
    synchronized (waiters) {
      if (!waiters.remove(w)) {
        return; // served or abandoned in the meantime
      }
      if (waiters.isEmpty()) {
        stopNudgingLocked();
      }
    }
    Peer current = peer;
    w.future.completeExceptionally(
        current == null
            ? YarpcException.of(
                Code.UNAVAILABLE, "single peer chooser for \"%s\" has been stopped", identifier)
            : unreachable(current, System.nanoTime() - w.startNanos));
  }

  private void abandon(Waiter w) {
    synchronized (waiters) {
      waiters.remove(w);
      if (waiters.isEmpty()) {
        stopNudgingLocked();
      }
    }
    w.cancelTimeout();
  }

  private void nudge() {
    synchronized (waiters) {
      if (waiters.isEmpty()) {
        nudger.stop();
        return;
      }
    }
    Peer current = peer;
    if (current != null && current.status() != ConnectionStatus.AVAILABLE) {
      current.connectNow();
    }
  }

  private void stopNudgingLocked() {
    nudger.stop();
  }

  @Override
  public String toString() {
    return "SinglePeerChooser{" + identifier + (failFast ? ", fail-fast" : "") + "}";
  }

  /** Builds a {@link SinglePeerChooser}; not thread-safe. */
  public static final class Builder {
    private final PeerTransport transport;
    private final String identifier;
    private boolean failFast;
    private Duration defaultChooseTimeout = AbstractPeerList.DEFAULT_CHOOSE_TIMEOUT;

    private Builder(PeerTransport transport, String identifier) {
      this.transport = requireNonNull(transport, "transport");
      this.identifier = requireNonNull(identifier, "identifier");
      if (identifier.isEmpty()) {
        throw new IllegalArgumentException("identifier must not be empty");
      }
    }

    /**
     * Whether choices return the peer at once whatever its status, leaving it to the transport to
     * report a peer it cannot reach; default false (wait for the peer within the call's deadline).
     */
    public Builder failFast(boolean failFast) {
      this.failFast = failFast;
      return this;
    }

    /**
     * How long a choice waits for the peer when the call has no deadline (a stream without one); default
     * {@link AbstractPeerList#DEFAULT_CHOOSE_TIMEOUT}.
     */
    public Builder defaultChooseTimeout(Duration timeout) {
      this.defaultChooseTimeout = Checks.positive(timeout, "timeout");
      return this;
    }

    /** The chooser, not started. */
    public SinglePeerChooser build() {
      return new SinglePeerChooser(this);
    }
  }
}
