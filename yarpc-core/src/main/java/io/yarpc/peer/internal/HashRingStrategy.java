package io.yarpc.peer.internal;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Headers;
import io.yarpc.transport.RequestMeta;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * {@code hashring32}: the member a call's shard key belongs to on a {@link HashRing32}, with yarpc-go's
 * options:
 *
 * <ol>
 *   <li>a call whose {@code peerOverrideHeader} names a member in rotation goes to it;
 *   <li>the key is the call's {@linkplain RequestMeta#shardKey() shard key}, or the value of {@code
 *       alternateShardKeyHeader} when one is configured; a call without a key goes to a point at random;
 *   <li>the offset n (0: the key's own member; n: the n-th distinct member after it) is the value of
 *       {@code offsetHeader} when the call has it, else a random number from 0 to {@code
 *       offsetGeneratorValue} exclusive when that is positive, else 0.
 * </ol>
 *
 * Choosing is a binary search over the points (O(log points)) and allocates nothing; adding or removing a
 * member rebuilds the ring (O(points)).
 */
public final class HashRingStrategy implements PeerStrategy {
  private final HashRing32 ring;
  private final Map<String, Member> byIdentifier = new HashMap<>();
  private final String offsetHeader;
  private final int offsetGeneratorValue;
  private final String peerOverrideHeader;
  private final String alternateShardKeyHeader;

  /**
   * A strategy placing each member at {@code replicas} points named with {@code delimiter}; the header
   * names are null when not used, and {@code offsetGeneratorValue} 0.
   */
  public HashRingStrategy(
      int replicas,
      String delimiter,
      String offsetHeader,
      int offsetGeneratorValue,
      String peerOverrideHeader,
      String alternateShardKeyHeader) {
    this.ring = new HashRing32(replicas, delimiter);
    this.offsetHeader = canonical(offsetHeader);
    this.offsetGeneratorValue = offsetGeneratorValue;
    this.peerOverrideHeader = canonical(peerOverrideHeader);
    this.alternateShardKeyHeader = canonical(alternateShardKeyHeader);
  }

  private static String canonical(String header) {
    return header == null
        ? null
        : Headers.canonicalize(header); // so lookups never lower-case again
  }

  @Override
  public void add(Member member) {
    ring.add(member);
    byIdentifier.put(member.identifier(), member);
  }

  @Override
  public void remove(Member member) {
    ring.remove(member);
    byIdentifier.remove(member.identifier());
  }

  @Override
  public Member choose(RequestMeta meta) {
    Headers headers = meta.headers();
    if (peerOverrideHeader != null) {
      String id = headers.get(peerOverrideHeader);
      Member override = id == null ? null : byIdentifier.get(id);
      if (override != null) {
        return override;
      }
    }
    int offset = offset(headers);
    String key =
        alternateShardKeyHeader != null ? headers.get(alternateShardKeyHeader) : meta.shardKey();
    if (key == null || key.isEmpty()) {
      return ring.chooseAt(ThreadLocalRandom.current().nextInt(ring.points()), offset);
    }
    return ring.choose(key, offset);
  }

  /** Refuses an offset header that is not a non-negative decimal integer. */
  @Override
  public void validate(RequestMeta meta) {
    if (offsetHeader == null) {
      return;
    }
    String value = meta.headers().get(offsetHeader);
    if (value != null && parseOffset(value) < 0) {
      throw YarpcException.of(
          Code.INVALID_ARGUMENT,
          "\"hashring32\" peer list: header %s must be a ring offset (an integer from 0 to 999999999), got \"%s\"",
          offsetHeader,
          value);
    }
  }

  private int offset(Headers headers) {
    String value = offsetHeader == null ? null : headers.get(offsetHeader);
    if (value != null) {
      return Math.max(0, parseOffset(value)); // validate() refused a bad one before
    }
    return offsetGeneratorValue > 0 ? ThreadLocalRandom.current().nextInt(offsetGeneratorValue) : 0;
  }

  /** The offset in {@code value}, or -1 when it is not a non-negative int. */
  private static int parseOffset(String value) {
    int n = value.length();
    if (n == 0 || n > 9) {
      return -1;
    }
    int v = 0;
    for (int i = 0; i < n; i++) {
      char c = value.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
      v = v * 10 + (c - '0');
    }
    return v;
  }

  /** In identifier order. */
  @Override
  public List<Member> rotation() {
    List<Member> members = new ArrayList<>(byIdentifier.values());
    members.sort((a, b) -> a.identifier().compareTo(b.identifier()));
    return members;
  }
}
