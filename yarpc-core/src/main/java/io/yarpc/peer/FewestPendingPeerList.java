package io.yarpc.peer;

import io.yarpc.peer.internal.FewestPendingStrategy;

/**
 * A peer list that gives each call to the available peer with the fewest pending requests ({@code
 * fewest-pending-requests} in yarpc-go): the list's own unfinished leases, so a peer that answers slowly
 * collects pending calls and gets fewer new ones. Peers with equal counts take turns, so with calls that
 * do not overlap it is round-robin. Choosing scans the peers in rotation (O(peers), stopping at the first
 * idle one); for lists of thousands of peers, {@link TwoRandomChoicesPeerList} is O(1) and nearly as
 * good.
 *
 * <p>Membership, availability, waiting, fail-fast, leases and thread-safety are every list's: see {@link
 * AbstractPeerList}.
 */
public final class FewestPendingPeerList extends AbstractPeerList {
  /** The list's name in errors, introspection and configuration, as in yarpc-go. */
  public static final String NAME = "fewest-pending-requests";

  private FewestPendingPeerList(Builder builder) {
    super(NAME, builder, new FewestPendingStrategy());
  }

  /** A builder for a list whose peers {@code transport} owns. */
  public static Builder builder(PeerTransport transport) {
    return new Builder(transport);
  }

  /** Builds a {@link FewestPendingPeerList}: the options of {@link AbstractPeerList.Builder}. */
  public static final class Builder
      extends AbstractPeerList.Builder<Builder, FewestPendingPeerList> {
    private Builder(PeerTransport transport) {
      super(transport);
    }

    @Override
    public FewestPendingPeerList build() {
      return new FewestPendingPeerList(this);
    }
  }
}
