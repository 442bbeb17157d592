package io.yarpc.peer.internal;

/**
 * FarmHash's 32-bit fingerprint ({@code Fingerprint32}, FarmHash's {@code farmhashmk::Hash32}): the hash
 * yarpc-go's {@code hashring32} list (through {@code github.com/dgryski/go-farm}) and Ringpop place keys
 * and replicas with, so a key lands on the same peer from Go and from Java. A fingerprint: stable across
 * versions and platforms. Bytes are read little-endian; the bytes of an input of up to 4 bytes are taken
 * as signed, as FarmHash's C++ does. Stateless and thread-safe.
 */
public final class Farmhash {
  private static final int C1 = 0xcc9e2d51;
  private static final int C2 = 0x1b873593;

  private Farmhash() {}

  /** The fingerprint of {@code s[offset, offset + length)}. */
  public static int fingerprint32(byte[] s, int offset, int length) {
    if (length <= 4) {
      return len0to4(s, offset, length);
    }
    if (length <= 12) {
      return len5to12(s, offset, length);
    }
    if (length <= 24) {
      return len13to24(s, offset, length);
    }
    return longer(s, offset, length);
  }

  /** The fingerprint of all of {@code s}. */
  public static int fingerprint32(byte[] s) {
    return fingerprint32(s, 0, s.length);
  }

  private static int len0to4(byte[] s, int off, int len) {
    int b = 0;
    int c = 9;
    for (int i = 0; i < len; i++) {
      b = b * C1 + s[off + i]; // signed, as the C++ reads a char
      c ^= b;
    }
    return fmix(mur(b, mur(len, c)));
  }

  private static int len5to12(byte[] s, int off, int len) {
    int a = len;
    int b = len * 5;
    int c = 9;
    int d = b;
    a += fetch(s, off);
    b += fetch(s, off + len - 4);
    c += fetch(s, off + ((len >>> 1) & 4));
    return fmix(mur(c, mur(b, mur(a, d))));
  }

  private static int len13to24(byte[] s, int off, int len) {
    int a = fetch(s, off - 4 + (len >>> 1));
    int b = fetch(s, off + 4);
    int c = fetch(s, off + len - 8);
    int d = fetch(s, off + (len >>> 1));
    int e = fetch(s, off);
    int f = fetch(s, off + len - 4);
    int h = d * C1 + len;
    a = Integer.rotateRight(a, 12) + f;
    h = mur(c, h) + a;
    a = Integer.rotateRight(a, 3) + c;
    h = mur(e, h) + a;
    a = Integer.rotateRight(a + f, 12) + d;
    h = mur(b, h) + a;
    return fmix(h);
  }

  private static int longer(byte[] s, int off, int len) {
    int h = len;
    int g = C1 * len;
    int f = g;
    int end = off + len;
    int a0 = Integer.rotateRight(fetch(s, end - 4) * C1, 17) * C2;
    int a1 = Integer.rotateRight(fetch(s, end - 8) * C1, 17) * C2;
    int a2 = Integer.rotateRight(fetch(s, end - 16) * C1, 17) * C2;
    int a3 = Integer.rotateRight(fetch(s, end - 12) * C1, 17) * C2;
    int a4 = Integer.rotateRight(fetch(s, end - 20) * C1, 17) * C2;
    h ^= a0;
    h = Integer.rotateRight(h, 19) * 5 + 0xe6546b64;
    h ^= a2;
    h = Integer.rotateRight(h, 19) * 5 + 0xe6546b64;
    g ^= a1;
    g = Integer.rotateRight(g, 19) * 5 + 0xe6546b64;
    g ^= a3;
    g = Integer.rotateRight(g, 19) * 5 + 0xe6546b64;
    f += a4;
    f = Integer.rotateRight(f, 19) + 113;
    for (int p = off; end - p > 20; p += 20) {
      int a = fetch(s, p);
      int b = fetch(s, p + 4);
      int c = fetch(s, p + 8);
      int d = fetch(s, p + 12);
      int e = fetch(s, p + 16);
      h += a;
      g += b;
      f += c;
      h = mur(d, h) + e;
      g = mur(c, g) + a;
      f = mur(b + e * C1, f) + d;
      f += g;
      g += f;
    }
    g = Integer.rotateRight(g, 11) * C1;
    g = Integer.rotateRight(g, 17) * C1;
    f = Integer.rotateRight(f, 11) * C1;
    f = Integer.rotateRight(f, 17) * C1;
    h = Integer.rotateRight(h + g, 19);
    h = h * 5 + 0xe6546b64;
    h = Integer.rotateRight(h, 17) * C1;
    h = Integer.rotateRight(h + f, 19);
    h = h * 5 + 0xe6546b64;
    h = Integer.rotateRight(h, 17) * C1;
    return h;
  }

  /** Murmur3's finalizer. */
  private static int fmix(int h) {
    h ^= h >>> 16;
    h *= 0x85ebca6b;
    h ^= h >>> 13;
    h *= 0xc2b2ae35;
    h ^= h >>> 16;
    return h;
  }

  /** Murmur3's step combining {@code a} into {@code h}. */
  private static int mur(int a, int h) {
    a *= C1;
    a = Integer.rotateRight(a, 17);
    a *= C2;
    h ^= a;
    h = Integer.rotateRight(h, 19);
    return h * 5 + 0xe6546b64;
  }

  private static int fetch(byte[] s, int i) {
    return (s[i] & 0xff)
        | (s[i + 1] & 0xff) << 8
        | (s[i + 2] & 0xff) << 16
        | (s[i + 3] & 0xff) << 24;
  }
}
