package io.yarpc.peer.internal;

import java.util.Arrays;

/**
 * A consistent hash ring of 32-bit points with yarpc-go's {@code hashring32} layout (which is Ringpop's):
 * a member stands at {@code replicas} points, the {@link Farmhash} fingerprints of its identifier, the
 * delimiter and the replica number in decimal ({@code 10.0.0.1:80} + {@code ""} + {@code 0} to {@code
 * 99} by default); a key belongs to the member of the first point at or after the key's fingerprint,
 * wrapping around, in unsigned order. So a key stays on its member while the members stay, and adding or
 * removing one member moves only the keys of the arcs it gains or loses: about 1/members of them. Points
 * that collide are ordered by identifier.
 *
 * <p>Points are kept sorted in two parallel arrays: {@link #add} and {@link #remove} rebuild them
 * (O(points)); a lookup is a binary search and allocates nothing. Not thread-safe: its strategy runs it
 * under the list's lock.
 */
final class HashRing32 {
  private final int replicas;
  private final String delimiter;
  private int[] points = new int[0]; // sorted, unsigned order
  private Member[] owners = new Member[0]; // owners[i] stands at points[i]
  private int members;
  private int epoch; // marks members (in Member.slot) during a walk for distinct members
  private byte[] scratch = new byte[64]; // UTF-8 of the string being hashed

  HashRing32(int replicas, String delimiter) {
    this.replicas = replicas;
    this.delimiter = delimiter;
  }

  /** Places {@code member} at its points; it must not be on the ring. */
  void add(Member member) {
    int[] mine = new int[replicas];
    for (int r = 0; r < replicas; r++) {
      mine[r] = fingerprint(member.identifier() + delimiter + r) ^ Integer.MIN_VALUE;
    }
    Arrays.sort(mine); // with the sign bit flipped, signed order is unsigned order
    for (int r = 0; r < replicas; r++) {
      mine[r] ^= Integer.MIN_VALUE;
    }
    int n = points.length;
    int[] p = new int[n + replicas];
    Member[] o = new Member[n + replicas];
    int i = 0;
    int j = 0;
    for (int k = 0; k < p.length; k++) {
      boolean old = j == replicas || i < n && before(points[i], owners[i], mine[j], member);
      if (old) {
        p[k] = points[i];
        o[k] = owners[i++];
      } else {
        p[k] = mine[j++];
        o[k] = member;
      }
    }
    points = p;
    owners = o;
    members++;
  }

  /** Takes {@code member}'s points off the ring; it must be on it. */
  void remove(Member member) {
    int[] p = new int[points.length - replicas];
    Member[] o = new Member[p.length];
    int k = 0;
    for (int i = 0; i < points.length; i++) {
      if (owners[i] != member) {
        p[k] = points[i];
        o[k++] = owners[i];
      }
    }
    points = p;
    owners = o;
    members--;
  }

  /** How many members are on the ring. */
  int members() {
    return members;
  }

  /**
   * The member {@code key} belongs to or, for {@code offset} n &gt; 0, the n-th distinct member after it
   * clockwise (yarpc-go's shard offset); {@code offset} is taken modulo the number of members. The ring
   * must not be empty.
   */
  Member choose(String key, int offset) {
    return walk(indexOf(fingerprint(key)), offset);
  }

  /** As {@link #choose} from the point at {@code index} (0 to {@link #points()} exclusive). */
  Member chooseAt(int index, int offset) {
    return walk(index, offset);
  }

  /** How many points the ring has: members × replicas. */
  int points() {
    return points.length;
  }

  /** The fingerprint of {@code s}'s UTF-8 bytes, encoded into a reused buffer. */
  int fingerprint(String s) {
    int length = utf8(s); // first: it may replace scratch
    return Farmhash.fingerprint32(scratch, 0, length);
  }

  /** Whether the point ({@code h1}, {@code m1}) comes before ({@code h2}, {@code m2}). */
  private static boolean before(int h1, Member m1, int h2, Member m2) {
    int c = Integer.compareUnsigned(h1, h2);
    return c < 0 || c == 0 && m1.identifier().compareTo(m2.identifier()) <= 0;
  }

  /** The first point at or after {@code hash}, wrapping to 0. */
  private int indexOf(int hash) {
    int lo = 0;
    int hi = points.length;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (Integer.compareUnsigned(points[mid], hash) < 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo == points.length ? 0 : lo;
  }

  private Member walk(int index, int offset) {
    int n = offset % members;
    if (n == 0) {
      return owners[index];
    }
    if (++epoch == 0) { // wrapped: forget every mark so none can match the new epoch
      for (Member m : owners) {
        m.slot = -1;
      }
      epoch = 1;
    }
    int distinct = 0;
    for (int step = 0, i = index;
        step < owners.length;
        step++, i = i + 1 == owners.length ? 0 : i + 1) {
      Member m = owners[i];
      if (m.slot != epoch) {
        m.slot = epoch;
        if (distinct++ == n) {
          return m;
        }
      }
    }
    throw new IllegalStateException("fewer than " + (n + 1) + " members on the ring: " + members);
  }

  /**
   * Writes {@code s} as UTF-8 into {@link #scratch} (growing it when needed) and returns the length;
   * the same bytes as {@code s.getBytes(UTF_8)}, a lone surrogate included ({@code ?}).
   */
  private int utf8(String s) {
    int n = s.length();
    if (scratch.length < n * 3) {
      scratch = new byte[Math.max(n * 3, scratch.length * 2)];
    }
    byte[] b = scratch;
    int p = 0;
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      if (c < 0x80) {
        b[p++] = (byte) c;
      } else if (c < 0x800) {
        b[p++] = (byte) (0xc0 | c >> 6);
        b[p++] = (byte) (0x80 | c & 0x3f);
      } else if (!Character.isSurrogate(c)) {
        b[p++] = (byte) (0xe0 | c >> 12);
        b[p++] = (byte) (0x80 | c >> 6 & 0x3f);
        b[p++] = (byte) (0x80 | c & 0x3f);
      } else if (Character.isHighSurrogate(c)
          && i + 1 < n
          && Character.isLowSurrogate(s.charAt(i + 1))) {
        int cp = Character.toCodePoint(c, s.charAt(++i));
        b[p++] = (byte) (0xf0 | cp >> 18);
        b[p++] = (byte) (0x80 | cp >> 12 & 0x3f);
        b[p++] = (byte) (0x80 | cp >> 6 & 0x3f);
        b[p++] = (byte) (0x80 | cp & 0x3f);
      } else {
        b[p++] = '?';
      }
    }
    return p;
  }
}
