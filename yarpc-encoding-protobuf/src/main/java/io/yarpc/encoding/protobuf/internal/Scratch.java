package io.yarpc.encoding.protobuf.internal;

import java.lang.ref.SoftReference;

/**
 * A per-thread scratch array for the decode paths that cannot parse in place: the bytes of a direct or
 * multi-buffer body (copied once) or of a body without byte access (read through its stream) land here
 * and are parsed without aliasing, so the array can be reused by the next decode on the same thread.
 * The encode path ({@link ProtoEncoding}) serialises messages of up to 64 KiB here before writing them
 * out.
 *
 * <p>The array grows to the largest body seen, in powers of two, up to {@link #MAX_RETAINED} bytes;
 * bigger bodies get a one-off array that is not kept. The thread keeps its array through a
 * {@link SoftReference}, so idle scratch space goes away under memory pressure. A decode that starts
 * while the thread's array is in use (it cannot happen with protobuf's parsers, which run no user code,
 * but a body's stream could) gets a one-off array too.
 */
final class Scratch {
  /** The largest array a thread keeps between decodes: 4 MiB. */
  public static final int MAX_RETAINED = 4 << 20;

  private static final int MIN_SIZE = 4096;

  private static final ThreadLocal<Scratch> LOCAL = ThreadLocal.withInitial(Scratch::new);

  private SoftReference<byte[]> ref;
  private boolean inUse;

  private Scratch() {}

  /**
   * An array of at least {@code minLength} bytes for this thread, to be handed back with {@link
   * #giveBack} once parsed (in a {@code finally}). Its contents are undefined.
   */
  public static byte[] take(int minLength) {
    if (minLength > MAX_RETAINED) {
      return new byte[minLength];
    }
    Scratch s = LOCAL.get();
    if (s.inUse) {
      return new byte[Math.max(minLength, 1)];
    }
    byte[] a = s.ref == null ? null : s.ref.get();
    if (a == null || a.length < minLength) {
      a = new byte[sizeFor(minLength)];
      s.ref = new SoftReference<>(a);
    }
    s.inUse = true;
    return a;
  }

  /**
   * An array of at least {@code minLength} bytes holding the first {@code used} bytes of {@code array}
   * (a scratch array from {@link #take}), for reads that outgrow it; {@code array} is given back.
   */
  public static byte[] grow(byte[] array, int used, int minLength) {
    giveBack(array);
    byte[] bigger = take(minLength);
    System.arraycopy(array, 0, bigger, 0, used);
    return bigger;
  }

  /** Ends the use of {@code array} taken with {@link #take}; one-off arrays are simply dropped. */
  public static void giveBack(byte[] array) {
    Scratch s = LOCAL.get();
    byte[] mine = s.ref == null ? null : s.ref.get();
    if (mine == array) {
      s.inUse = false;
    }
  }

  /** The array size used for a request of {@code minLength}: the next power of two, at least 4 KiB. */
  static int sizeFor(int minLength) {
    if (minLength <= MIN_SIZE) {
      return MIN_SIZE;
    }
    int pow2 = Integer.highestOneBit(minLength - 1) << 1;
    return pow2 > 0 && pow2 <= MAX_RETAINED ? pow2 : minLength;
  }

  /** The length of this thread's kept array, 0 if none (for tests). */
  static int retainedLength() {
    Scratch s = LOCAL.get();
    byte[] a = s.ref == null ? null : s.ref.get();
    return a == null ? 0 : a.length;
  }
}
