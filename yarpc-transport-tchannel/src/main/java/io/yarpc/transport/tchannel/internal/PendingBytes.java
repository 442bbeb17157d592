package io.yarpc.transport.tchannel.internal;

import io.netty.buffer.ByteBuf;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * The memory one connection holds for call req messages still being assembled, in bytes: what counts
 * against {@code maxPendingBytesPerConnection} and the inbound's {@link PendingBudget}.
 *
 * <p>An arg chunk is kept as a retained slice of the buffer the socket was read into, and a slice pins
 * that whole buffer, however small the slice (the frame decoder's cumulation buffer can grow to hundreds
 * of KiB while slices pin it): counting the arg bytes alone would let a peer that sends fragments slowly
 * pin far more memory than it is charged for. So each buffer pinned by at least one held chunk counts
 * once, with the memory it had reserved when it was first pinned, and each chunk adds a fixed overhead
 * for its slice and bookkeeping; and a chunk that would pin much more than itself is kept as a copy
 * instead ({@link #wouldPinMuchMore}). A chunk stops counting when its message is handed to a handler (the
 * body then belongs to the invocation), ended, or released.
 *
 * <p>Not thread-safe: the connection's event loop only (the shared budget is thread-safe).
 */
final class PendingBytes {
  /** What one held chunk costs beyond the buffer it pins: the slice object and its list slot. */
  static final int CHUNK_OVERHEAD = 64;

  private final PendingBudget budget;
  private final Map<ByteBuf, long[]> pinned = new IdentityHashMap<>(); // root -> {chunks, capacity}
  private long held;

  /** A connection's tracker, sharing {@code budget} with the inbound's other connections. */
  PendingBytes(PendingBudget budget) {
    this.budget = budget;
  }

  /** The bytes held now. */
  long held() {
    return held;
  }

  /** The inbound's budget. */
  PendingBudget budget() {
    return budget;
  }

  /** A chunk is now held. */
  void add(ByteBuf chunk) {
    ByteBuf root = root(chunk);
    long[] entry = pinned.get(root);
    long delta = CHUNK_OVERHEAD;
    if (entry == null) {
      long capacity = reserved(root);
      pinned.put(root, new long[] {1, capacity});
      delta += capacity;
    } else {
      entry[0]++;
    }
    held += delta;
    budget.add(delta);
  }

  /** A chunk {@linkplain #add added} earlier is no longer held. */
  void remove(ByteBuf chunk) {
    ByteBuf root = root(chunk);
    long[] entry = pinned.get(root);
    if (entry == null) {
      return; // not added (cannot happen; guards the totals)
    }
    long delta = CHUNK_OVERHEAD;
    if (--entry[0] == 0) {
      pinned.remove(root);
      delta += entry[1];
    }
    held -= delta;
    budget.remove(delta);
  }

  /**
   * Whether a retained slice of {@code length} bytes of {@code frame} would pin more than eight times its
   * size (the buffer under the frame is that much larger): such a chunk is better kept as a copy. A full
   * frame (64 KiB) pins at most about four times itself (the frame decoder compacts its cumulation after
   * every read): large chunks stay zero-copy; a peer's small fragments cost only what they hold.
   */
  static boolean wouldPinMuchMore(ByteBuf frame, int length) {
    return 8L * length < reserved(root(frame));
  }

  /** The memory a buffer holds: its capacity, or what its pool reserved for it when that is more. */
  private static long reserved(ByteBuf root) {
    return Math.max(root.capacity(), (long) root.writerIndex() + root.maxFastWritableBytes());
  }

  private static ByteBuf root(ByteBuf b) {
    ByteBuf r = b;
    for (ByteBuf u = r.unwrap(); u != null; u = r.unwrap()) {
      r = u;
    }
    return r;
  }
}
