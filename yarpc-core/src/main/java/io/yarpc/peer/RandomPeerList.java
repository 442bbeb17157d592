package io.yarpc.peer;

import io.yarpc.peer.internal.RandomStrategy;

/**
 * A peer list that gives each call to an available peer chosen uniformly at random ({@code random} in
 * yarpc-go): even on average, with no state shared between calls, and no herd on one peer when many
 * clients start together. Choosing is O(1).
 *
 * <p>Membership, availability, waiting, fail-fast, leases and thread-safety are every list's: see {@link
 * AbstractPeerList}.
 */
public final class RandomPeerList extends AbstractPeerList {
  /** The list's name in errors, introspection and configuration, as in yarpc-go. */
  public static final String NAME = "random";

  private RandomPeerList(Builder builder) {
    super(NAME, builder, new RandomStrategy());
  }

  /** A builder for a list whose peers {@code transport} owns. */
  public static Builder builder(PeerTransport transport) {
    return new Builder(transport);
  }

  /** Builds a {@link RandomPeerList}: the options of {@link AbstractPeerList.Builder}. */
  public static final class Builder extends AbstractPeerList.Builder<Builder, RandomPeerList> {
    private Builder(PeerTransport transport) {
      super(transport);
    }

    @Override
    public RandomPeerList build() {
      return new RandomPeerList(this);
    }
  }
}
