package io.yarpc.transport.tchannel.internal;

import io.netty.buffer.ByteBuf;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * The memory one connection holds for call req messages still being assembled, in bytes: what counts
 * against {@code maxPendingBytesPerConnection} and the inbound's {@link PendingBudget}.
 *
 * <p>An arg chunk is kept as a retained slice of the buffer the socket was read into, and a slice pins
 * that whole buffer, however small the slice: counting the arg bytes alone would let a peer that sends
 * tiny fragments pin far more memory than it is charged for. So each buffer pinned by at least one held
 * chunk counts once, with the capacity it had when it was first pinned, and each chunk adds a fixed
 * overhead for its slice and bookkeeping. A chunk stops counting when its message is handed to a handler
 * (the body then belongs to the invocation), ended, or released.
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
      long capacity = root.capacity();
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

  private static ByteBuf root(ByteBuf b) {
    ByteBuf r = b;
    for (ByteBuf u = r.unwrap(); u != null; u = r.unwrap()) {
      r = u;
    }
    return r;
  }
}
