package io.yarpc.peer.internal;

import static java.util.Objects.requireNonNull;

import io.yarpc.peer.Peer;
import io.yarpc.peer.PeerLease;
import io.yarpc.transport.Deadline;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * A {@link PeerLease} that counts one pending request on a chooser-owned counter: the counter goes up when
 * the lease is {@linkplain #start created} and down on the first {@link #finish(Throwable)} or {@link
 * #abandon()}; later calls do nothing. A lease with an {@link Owner} also tells it how the call ended
 * (outlier detection). The chooser owns the counter and the owner; the caller that received the lease
 * owns the lease and must finish it once.
 */
public final class CountedLease implements PeerLease {
  /** Who learns how a lease ended: a peer list member under outlier detection. */
  public interface Owner {
    /**
     * The lease ended with {@code outcome} ({@code error} is the call's, null on success); {@code probe}
     * is the lease's flag. Called once per lease, on the thread that finished it.
     */
    void leaseEnded(LeaseOutcome outcome, Throwable error, boolean probe);
  }

  private static final AtomicIntegerFieldUpdater<CountedLease> FINISHED =
      AtomicIntegerFieldUpdater.newUpdater(CountedLease.class, "finished");

  private final Peer peer;
  private final AtomicInteger pending;
  private final Owner owner;
  private final Deadline deadline;
  private final boolean probe;
  private volatile int finished;

  private CountedLease(
      Peer peer, AtomicInteger pending, Owner owner, Deadline deadline, boolean probe) {
    this.peer = peer;
    this.pending = pending;
    this.owner = owner;
    this.deadline = deadline;
    this.probe = probe;
  }

  /** Increments {@code pending} and returns a lease on {@code peer} that decrements it once when finished. */
  public static CountedLease start(Peer peer, AtomicInteger pending) {
    return start(peer, pending, null, null, false);
  }

  /**
   * As {@link #start(Peer, AtomicInteger)}, and when finished tells {@code owner} (null: nobody) the
   * call's {@link LeaseOutcome}, judged with the call's {@code deadline} (null: none); {@code probe} is
   * passed along.
   */
  public static CountedLease start(
      Peer peer, AtomicInteger pending, Owner owner, Deadline deadline, boolean probe) {
    requireNonNull(peer, "peer");
    requireNonNull(pending, "pending");
    pending.incrementAndGet();
    return new CountedLease(peer, pending, owner, deadline, probe);
  }

  @Override
  public Peer peer() {
    return peer;
  }

  /** On the first call only: decrements the pending count and tells the owner the call's outcome. */
  @Override
  public void finish(Throwable error) {
    if (FINISHED.compareAndSet(this, 0, 1)) {
      pending.decrementAndGet();
      if (owner != null) {
        owner.leaseEnded(LeaseOutcome.of(error, deadline), error, probe);
      }
    }
  }

  /** On the first call only: decrements the pending count; the owner learns nothing about the peer. */
  @Override
  public void abandon() {
    if (FINISHED.compareAndSet(this, 0, 1)) {
      pending.decrementAndGet();
      if (owner != null) {
        owner.leaseEnded(LeaseOutcome.NONE, null, probe);
      }
    }
  }

  /** Whether {@link #finish(Throwable)} or {@link #abandon()} has been called. */
  public boolean isFinished() {
    return finished != 0;
  }

  /** Whether this lease is the probe of a peer on probation. */
  public boolean isProbe() {
    return probe;
  }

  @Override
  public String toString() {
    return "PeerLease{"
        + peer.identifier()
        + (probe ? ", probe" : "")
        + (finished != 0 ? ", finished}" : "}");
  }
}
