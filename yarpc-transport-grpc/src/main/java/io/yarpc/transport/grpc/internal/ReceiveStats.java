package io.yarpc.transport.grpc.internal;

import java.util.concurrent.atomic.LongAdder;

/**
 * Counters of what a {@link BodyMarshaller} did with received messages: how many it handed on as byte
 * access over grpc-java's own (detached) buffers, how many of those were released, how many it had to
 * copy into a heap array (compressed messages, streams without byte access), and how many bytes it
 * copied in all. For tests and diagnostics:
 * once every call is over, {@link #detached()} equals {@link #released()}.
 */
public final class ReceiveStats {
  private final LongAdder detached = new LongAdder();
  private final LongAdder released = new LongAdder();
  private final LongAdder copied = new LongAdder();
  private final LongAdder copiedBytes = new LongAdder();

  /** Messages received as views over detached grpc-java buffers. */
  public long detached() {
    return detached.sum();
  }

  /** Detached messages whose buffers were given back (exactly once each). */
  public long released() {
    return released.sum();
  }

  /** Messages that had to be copied into a heap array. */
  public long copied() {
    return copied.sum();
  }

  /**
   * Bytes copied into heap arrays: whole copied messages, plus the pieces of detached messages that
   * grpc-java itself had merged into a heap array (runs of tiny network reads), copied when a reader asks
   * for views.
   */
  public long copiedBytes() {
    return copiedBytes.sum();
  }

  /** Detached messages not released yet. */
  public long outstanding() {
    return detached() - released();
  }

  void onDetached() {
    detached.increment();
  }

  void onCopiedPieces(int bytes) {
    copiedBytes.add(bytes);
  }

  void onReleased() {
    released.increment();
  }

  void onCopied(int bytes) {
    copied.increment();
    copiedBytes.add(bytes);
  }

  @Override
  public String toString() {
    return "ReceiveStats{detached="
        + detached()
        + ", released="
        + released()
        + ", copied="
        + copied()
        + ", copiedBytes="
        + copiedBytes()
        + "}";
  }
}
