package io.yarpc.peer;

import io.yarpc.peer.internal.RoundRobinStrategy;

/**
 * A peer list that gives calls to its available peers in turn ({@code round-robin} in yarpc-go). A peer
 * that becomes available joins the turn just before the cursor (it is the last of the current turn); one
 * that stops being available leaves it. With every peer equally fast this spreads calls evenly; it does
 * not notice a slow peer (see {@link FewestPendingPeerList}). Choosing is O(1).
 *
 * <p>Membership, availability, waiting, fail-fast, leases and thread-safety are every list's: see {@link
 * AbstractPeerList}.
 */
public final class RoundRobinPeerList extends AbstractPeerList {
  /** The list's name in errors, introspection and configuration, as in yarpc-go. */
  public static final String NAME = "round-robin";

  private RoundRobinPeerList(Builder builder) {
    super(NAME, builder, new RoundRobinStrategy());
  }

  /** A builder for a list whose peers {@code transport} owns. */
  public static Builder builder(PeerTransport transport) {
    return new Builder(transport);
  }

  /** Builds a {@link RoundRobinPeerList}: the options of {@link AbstractPeerList.Builder}. */
  public static final class Builder extends AbstractPeerList.Builder<Builder, RoundRobinPeerList> {
    private Builder(PeerTransport transport) {
      super(transport);
    }

    @Override
    public RoundRobinPeerList build() {
      return new RoundRobinPeerList(this);
    }
  }
}
