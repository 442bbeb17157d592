package io.yarpc.transport.tchannel.internal;

import static java.util.Objects.requireNonNull;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;

/**
 * The receiving allocator of the transport's channels: every buffer Netty reads the socket into and every
 * default buffer (the frame decoder's cumulation) is a pooled <em>heap</em> buffer. Frames are then slices
 * of heap buffers, so the bodies built over arg3 expose arrays through byte access and encodings parse
 * them in place (protobuf {@code CodedInputStream.newInstance(array, offset, length)}, Gson readers, raw
 * copies) with no copy at all. The price is one copy inside the JDK (a socket read into a heap buffer
 * goes through a temporary direct buffer), which replaces the copy a decoder would otherwise make out of
 * direct memory. Frames the transport writes are allocated as direct buffers elsewhere.
 */
public final class HeapReceiveAllocator implements ByteBufAllocator {
  private final ByteBufAllocator delegate;

  /** Heap buffers from {@code delegate} (a pooled allocator). */
  public HeapReceiveAllocator(ByteBufAllocator delegate) {
    this.delegate = requireNonNull(delegate, "delegate");
  }

  @Override
  public ByteBuf buffer() {
    return delegate.heapBuffer();
  }

  @Override
  public ByteBuf buffer(int initialCapacity) {
    return delegate.heapBuffer(initialCapacity);
  }

  @Override
  public ByteBuf buffer(int initialCapacity, int maxCapacity) {
    return delegate.heapBuffer(initialCapacity, maxCapacity);
  }

  @Override
  public ByteBuf ioBuffer() {
    return delegate.heapBuffer();
  }

  @Override
  public ByteBuf ioBuffer(int initialCapacity) {
    return delegate.heapBuffer(initialCapacity);
  }

  @Override
  public ByteBuf ioBuffer(int initialCapacity, int maxCapacity) {
    return delegate.heapBuffer(initialCapacity, maxCapacity);
  }

  @Override
  public ByteBuf heapBuffer() {
    return delegate.heapBuffer();
  }

  @Override
  public ByteBuf heapBuffer(int initialCapacity) {
    return delegate.heapBuffer(initialCapacity);
  }

  @Override
  public ByteBuf heapBuffer(int initialCapacity, int maxCapacity) {
    return delegate.heapBuffer(initialCapacity, maxCapacity);
  }

  @Override
  public ByteBuf directBuffer() {
    return delegate.directBuffer();
  }

  @Override
  public ByteBuf directBuffer(int initialCapacity) {
    return delegate.directBuffer(initialCapacity);
  }

  @Override
  public ByteBuf directBuffer(int initialCapacity, int maxCapacity) {
    return delegate.directBuffer(initialCapacity, maxCapacity);
  }

  @Override
  public CompositeByteBuf compositeBuffer() {
    return delegate.compositeHeapBuffer();
  }

  @Override
  public CompositeByteBuf compositeBuffer(int maxNumComponents) {
    return delegate.compositeHeapBuffer(maxNumComponents);
  }

  @Override
  public CompositeByteBuf compositeHeapBuffer() {
    return delegate.compositeHeapBuffer();
  }

  @Override
  public CompositeByteBuf compositeHeapBuffer(int maxNumComponents) {
    return delegate.compositeHeapBuffer(maxNumComponents);
  }

  @Override
  public CompositeByteBuf compositeDirectBuffer() {
    return delegate.compositeDirectBuffer();
  }

  @Override
  public CompositeByteBuf compositeDirectBuffer(int maxNumComponents) {
    return delegate.compositeDirectBuffer(maxNumComponents);
  }

  @Override
  public boolean isDirectBufferPooled() {
    return delegate.isDirectBufferPooled();
  }

  @Override
  public int calculateNewCapacity(int minNewCapacity, int maxCapacity) {
    return delegate.calculateNewCapacity(minNewCapacity, maxCapacity);
  }
}
