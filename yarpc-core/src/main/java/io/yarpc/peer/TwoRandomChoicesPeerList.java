package io.yarpc.peer;

import io.yarpc.peer.internal.TwoRandomChoicesStrategy;

/**
 * A peer list that draws two distinct available peers at random and gives the call to the one with fewer
 * pending requests ({@code two-random-choices} in yarpc-go; "the power of two choices"): a slow peer gets
 * fewer calls, as with {@link FewestPendingPeerList}, at O(1) per choice whatever the number of peers, and
 * clients sharing the peers do not all pick the same least-loaded one. With one peer in rotation, that
 * peer.
 *
 * <p>Membership, availability, waiting, fail-fast, leases and thread-safety are every list's: see {@link
 * AbstractPeerList}.
 */
public final class TwoRandomChoicesPeerList extends AbstractPeerList {
  /** The list's name in errors, introspection and configuration, as in yarpc-go. */
  public static final String NAME = "two-random-choices";

  private TwoRandomChoicesPeerList(Builder builder) {
    super(NAME, builder, new TwoRandomChoicesStrategy());
  }

  /** A builder for a list whose peers {@code transport} owns. */
  public static Builder builder(PeerTransport transport) {
    return new Builder(transport);
  }

  /** Builds a {@link TwoRandomChoicesPeerList}: the options of {@link AbstractPeerList.Builder}. */
  public static final class Builder
      extends AbstractPeerList.Builder<Builder, TwoRandomChoicesPeerList> {
    private Builder(PeerTransport transport) {
      super(transport);
    }

    @Override
    public TwoRandomChoicesPeerList build() {
      return new TwoRandomChoicesPeerList(this);
    }
  }
}
