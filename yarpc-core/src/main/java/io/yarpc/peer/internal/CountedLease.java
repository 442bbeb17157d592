package io.yarpc.peer.internal;

import static java.util.Objects.requireNonNull;

import io.yarpc.peer.Peer;
import io.yarpc.peer.PeerLease;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A {@link PeerLease} that counts one pending request on a chooser-owned counter: the counter goes up when
 * the lease is {@linkplain #start created} and down on the first {@link #finish(Throwable)}; later calls
 * to {@code finish} do nothing. The chooser owns the counter; the caller that received the lease owns the
 * lease and must finish it once.
 */
public final class CountedLease implements PeerLease {
  private final Peer peer;
  private final AtomicInteger pending;
  private final AtomicBoolean finished = new AtomicBoolean();

  private CountedLease(Peer peer, AtomicInteger pending) {
    this.peer = peer;
    this.pending = pending;
  }

  /** Increments {@code pending} and returns a lease on {@code peer} that decrements it once when finished. */
  public static CountedLease start(Peer peer, AtomicInteger pending) {
    requireNonNull(peer, "peer");
    requireNonNull(pending, "pending");
    pending.incrementAndGet();
    return new CountedLease(peer, pending);
  }

  @Override
  public Peer peer() {
    return peer;
  }

  /** Decrements the pending count on the first call only; {@code error} is not used by the count. */
  @Override
  public void finish(Throwable error) {
    if (finished.compareAndSet(false, true)) {
      pending.decrementAndGet();
    }
  }

  /** Whether {@link #finish(Throwable)} has been called. */
  public boolean isFinished() {
    return finished.get();
  }

  @Override
  public String toString() {
    return "PeerLease{" + peer.identifier() + (finished.get() ? ", finished}" : "}");
  }
}
