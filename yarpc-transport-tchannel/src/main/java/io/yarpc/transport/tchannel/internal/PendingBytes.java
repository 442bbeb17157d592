package io.yarpc.transport.tchannel.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * The memory one connection holds for call req messages still being assembled, in bytes: what counts
 * against {@code maxPendingBytesPerConnection} and the inbound's {@link PendingBudget}.
 *
 * <p>An arg chunk is kept as a retained view of the buffers the socket read it into (a slice of one, or
 * of each read under it, see {@link FramePieces}), and a view pins those whole buffers, however small the
 * view (a buffer that merged a partial frame with the next read can be a few times a frame): counting the
 * arg bytes alone would let a peer that sends fragments slowly pin far more memory than it is charged
 * for. So each buffer pinned by at least one held chunk counts once, with the memory it had reserved
 * when it was first pinned, and each chunk adds a fixed overhead for its slices and bookkeeping; and a
 * chunk that would pin much more than itself is kept as a copy instead ({@link #wouldPinMuchMore}). A
 * chunk stops counting when its message is handed to a handler (the body then belongs to the invocation),
 * ended, or released.
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
    long delta = CHUNK_OVERHEAD;
    if (root instanceof CompositeByteBuf frame) {
      for (int i = 0; i < frame.numComponents(); i++) {
        delta += pin(root(frame.internalComponent(i)));
      }
    } else {
      delta += pin(root);
    }
    held += delta;
    budget.add(delta);
  }

  /** A chunk {@linkplain #add added} earlier is no longer held. */
  void remove(ByteBuf chunk) {
    ByteBuf root = root(chunk);
    long delta = CHUNK_OVERHEAD;
    if (root instanceof CompositeByteBuf frame) {
      for (int i = 0; i < frame.numComponents(); i++) {
        delta += unpin(root(frame.internalComponent(i)));
      }
    } else {
      delta += unpin(root);
    }
    held -= delta;
    budget.remove(delta);
  }

  /** One more held chunk pins {@code root}: what that newly costs (its memory when it was not pinned). */
  private long pin(ByteBuf root) {
    long[] entry = pinned.get(root);
    if (entry != null) {
      entry[0]++;
      return 0;
    }
    long capacity = reserved(root);
    pinned.put(root, new long[] {1, capacity});
    return capacity;
  }

  /** One held chunk fewer pins {@code root}: what that gives back (its memory when no chunk pins it). */
  private long unpin(ByteBuf root) {
    long[] entry = pinned.get(root);
    if (entry == null || --entry[0] > 0) {
      return 0; // (not pinned cannot happen; guards the totals)
    }
    pinned.remove(root);
    return entry[1];
  }

  /**
   * Whether a retained view of {@code length} bytes of {@code frame} from {@code index} would pin more
   * than eight times its size (the buffers under it are that much larger): such a chunk is better kept as
   * a copy. The buffers under it are the one the frame is a slice of, or, for a frame across reads, the
   * reads the chunk lies in (what {@link FramePieces#retainedRange} keeps). A full frame (64 KiB) pins at
   * most about four times itself (the frame decoder compacts its cumulation after every read, and
   * composes large frames from the reads): large chunks stay zero-copy; a peer's small fragments cost
   * only what they hold.
   */
  static boolean wouldPinMuchMore(ByteBuf frame, int index, int length) {
    ByteBuf root = root(frame);
    long under = 0;
    if (root instanceof CompositeByteBuf c && length > 0) {
      ByteBuf previous = null;
      for (int k = c.toComponentIndex(index), last = c.toComponentIndex(index + length - 1);
          k <= last;
          k++) {
        ByteBuf read = root(c.internalComponent(k));
        if (read != previous) {
          under += reserved(read);
        }
        previous = read;
      }
    } else {
      under = reserved(root);
    }
    return 8L * length < under;
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
