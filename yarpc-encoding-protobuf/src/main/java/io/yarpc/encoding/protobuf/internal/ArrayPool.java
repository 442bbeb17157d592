package io.yarpc.encoding.protobuf.internal;

/**
 * Heap arrays that can be borrowed and given back, for the aliasing decode path: a message parsed with
 * aliasing points into the array, so it may only be given back once nothing reads the message any more.
 * Implemented by the pool of {@link io.yarpc.encoding.protobuf.unsafe.UnsafeAliasing} (reached through
 * {@link AliasingPools}); not for applications.
 */
public interface ArrayPool {
  /** An array of at least {@code minLength} bytes; its contents are undefined. */
  byte[] borrow(int minLength);

  /** Returns an array from {@link #borrow}; the caller must not touch it (or anything aliasing it) again. */
  void giveBack(byte[] array);
}
