package io.yarpc.peer.internal;

import static java.util.Objects.requireNonNull;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * One identifier of a peer list as its {@link PeerStrategy} sees it: the identifier and the count of
 * unfinished leases on it. The list ({@link io.yarpc.peer.AbstractPeerList}) makes one per membership
 * and owns the count; strategies read it.
 */
public abstract class Member {
  private final String identifier;

  /**
   * Unfinished leases on this member: incremented when the list hands one out, decremented when it is
   * finished ({@link CountedLease}). Owned by the list.
   */
  protected final AtomicInteger pending = new AtomicInteger();

  /**
   * An int the member's strategy uses as it likes (its index in the strategy's array, a mark); only
   * touched under the list's lock.
   */
  int slot = -1;

  /** A member for {@code identifier}. */
  protected Member(String identifier) {
    this.identifier = requireNonNull(identifier, "identifier");
  }

  /** The peer's identifier, usually {@code host:port}. */
  public final String identifier() {
    return identifier;
  }

  /** How many leases on this member are not finished yet. */
  public final int pendingRequests() {
    return pending.get();
  }

  @Override
  public String toString() {
    return "Member{" + identifier + "}";
  }
}
