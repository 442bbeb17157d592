package io.yarpc.transport.http.internal;

import static java.util.Objects.requireNonNull;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;

/**
 * The allocator of the transport's channels when they receive into heap memory: every buffer Netty
 * reads the socket into ({@link #ioBuffer()}) and every default buffer ({@link #buffer()}) is a pooled
 * <em>heap</em> buffer. Decoded HTTP content then consists of slices of heap buffers, so the request and
 * response {@link io.yarpc.transport.Body bodies} the transport builds expose arrays through byte access
 * and decoders (protobuf, gson, raw) parse them in place, with no copy at all.
 *
 * <p>The price is one copy inside the JDK (a socket read into a heap buffer goes through a temporary
 * direct buffer), which replaces the copy a decoder would otherwise make out of direct memory. Buffers
 * the transport writes (response and request bodies) are allocated as direct buffers elsewhere.
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

  @Override
  public String toString() {
    return "HeapReceiveAllocator{" + delegate + "}";
  }
}
