package io.yarpc.peer;

import static java.util.Objects.requireNonNull;

import io.yarpc.peer.internal.HashRingStrategy;

/**
 * A peer list that gives each call to the peer its shard key belongs to on a consistent hash ring ({@code
 * hashring32} in yarpc-go, with its layout, so Go and Java clients send a key to the same peer): each
 * available peer stands at {@link Builder#numReplicas(int) numReplicas} points, the 32-bit FarmHash
 * fingerprints of its identifier, the {@link Builder#replicaDelimiter(String) delimiter} and the replica
 * number; a key ({@link io.yarpc.CallOptions#shardKey(String) shard key}) goes to the peer of the first
 * point at or after the key's fingerprint. So a key stays on one peer while the peers in rotation stay
 * the same, and when a peer leaves (removed, or no longer available) only its keys move, to the peers
 * after it on the ring; when it comes back they return. A call without a shard key goes to a peer at
 * random.
 *
 * <p>yarpc-go's routing options, each off unless set: a {@link Builder#peerOverrideHeader(String) peer
 * override header} naming a peer in rotation sends the call there; an {@link
 * Builder#alternateShardKeyHeader(String) alternate shard key header} is the key instead of the shard
 * key; an {@link Builder#offsetHeader(String) offset header} n (or, without it, a random n below {@link
 * Builder#offsetGeneratorValue(int)}) sends the call to the n-th distinct peer after the key's own (n
 * taken modulo the number of peers in rotation). An offset header that is not an integer from 0 fails the
 * call with {@code invalid-argument} (yarpc-go uses 0).
 *
 * <p>Choosing is a binary search (O(log points)) that allocates nothing; a peer entering or leaving
 * rotation rebuilds the ring (O(points)). Membership, availability, waiting, fail-fast, leases and
 * thread-safety are every list's: see {@link AbstractPeerList}.
 */
public final class HashRingPeerList extends AbstractPeerList {
  /** The list's name in errors, introspection and configuration, as in yarpc-go. */
  public static final String NAME = "hashring32";

  /** The points per peer unless the builder says otherwise, as in yarpc-go. */
  public static final int DEFAULT_NUM_REPLICAS = 100;

  /** The most points per peer {@link Builder#numReplicas(int)} accepts. */
  public static final int MAX_NUM_REPLICAS = 10_000;

  private HashRingPeerList(Builder b) {
    super(
        NAME,
        b,
        new HashRingStrategy(
            b.numReplicas,
            b.replicaDelimiter,
            b.offsetHeader,
            b.offsetGeneratorValue,
            b.peerOverrideHeader,
            b.alternateShardKeyHeader));
  }

  /** A builder for a list whose peers {@code transport} owns. */
  public static Builder builder(PeerTransport transport) {
    return new Builder(transport);
  }

  /**
   * Builds a {@link HashRingPeerList}: the options of {@link AbstractPeerList.Builder} and the ring's.
   * Changing {@code numReplicas} or {@code replicaDelimiter} moves keys: keep them the same across the
   * clients of one service.
   */
  public static final class Builder extends AbstractPeerList.Builder<Builder, HashRingPeerList> {
    private int numReplicas = DEFAULT_NUM_REPLICAS;
    private String replicaDelimiter = "";
    private String offsetHeader;
    private int offsetGeneratorValue;
    private String peerOverrideHeader;
    private String alternateShardKeyHeader;

    private Builder(PeerTransport transport) {
      super(transport);
    }

    /**
     * How many points each peer stands at, from 1 to {@value #MAX_NUM_REPLICAS}; default {@value
     * #DEFAULT_NUM_REPLICAS}. More points spread keys more evenly and make a peer's arrival or departure
     * slower (the ring is rebuilt).
     */
    public Builder numReplicas(int numReplicas) {
      if (numReplicas < 1 || numReplicas > MAX_NUM_REPLICAS) {
        throw new IllegalArgumentException(
            "numReplicas must be from 1 to " + MAX_NUM_REPLICAS + ": " + numReplicas);
      }
      this.numReplicas = numReplicas;
      return this;
    }

    /**
     * What joins a peer's identifier and a replica number in the names hashed for its points; default
     * empty ({@code 10.0.0.1:800} is replica 0 of {@code 10.0.0.1:80}). Ringpop uses {@code #}.
     */
    public Builder replicaDelimiter(String delimiter) {
      this.replicaDelimiter = requireNonNull(delimiter, "delimiter");
      return this;
    }

    /**
     * The request header holding a call's ring offset n: the call goes to the n-th distinct peer after the
     * key's own; default none.
     */
    public Builder offsetHeader(String header) {
      this.offsetHeader = headerName(header, "offsetHeader");
      return this;
    }

    /**
     * When positive, a call without an offset header gets a random offset from 0 to this value
     * exclusive, spreading one key over that many peers; default 0 (no offset).
     */
    public Builder offsetGeneratorValue(int value) {
      if (value < 0) {
        throw new IllegalArgumentException("offsetGeneratorValue must not be negative: " + value);
      }
      this.offsetGeneratorValue = value;
      return this;
    }

    /**
     * The request header naming the peer (its identifier) a call goes to when that peer is in rotation,
     * whatever the key; default none.
     */
    public Builder peerOverrideHeader(String header) {
      this.peerOverrideHeader = headerName(header, "peerOverrideHeader");
      return this;
    }

    /**
     * The request header whose value is the call's key instead of its shard key (a call without the header
     * has no key); default none.
     */
    public Builder alternateShardKeyHeader(String header) {
      this.alternateShardKeyHeader = headerName(header, "alternateShardKeyHeader");
      return this;
    }

    private static String headerName(String header, String option) {
      requireNonNull(header, option);
      if (header.isEmpty()) {
        throw new IllegalArgumentException(option + " must not be empty");
      }
      return header;
    }

    @Override
    public HashRingPeerList build() {
      return new HashRingPeerList(this);
    }
  }
}
