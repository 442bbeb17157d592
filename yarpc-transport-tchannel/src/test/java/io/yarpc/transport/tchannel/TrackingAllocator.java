package io.yarpc.transport.tchannel;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * A pooled allocator that remembers every buffer it hands out, so a test can assert that all of them
 * were released ({@code refCnt() == 0}) once the transport is quiet: a direct check on top of Netty's
 * leak detector, which only sees buffers that were garbage-collected.
 */
final class TrackingAllocator implements ByteBufAllocator {
  private final ByteBufAllocator delegate = PooledByteBufAllocator.DEFAULT;
  private final List<ByteBuf> allocated = new ArrayList<>();

  private <T extends ByteBuf> T track(T buf) {
    synchronized (allocated) {
      allocated.add(buf);
    }
    return buf;
  }

  /** How many buffers were handed out so far. */
  int allocatedCount() {
    synchronized (allocated) {
      return allocated.size();
    }
  }

  /** How many of the buffers handed out so far were composites. */
  int compositeCount() {
    synchronized (allocated) {
      return (int) allocated.stream().filter(b -> b instanceof CompositeByteBuf).count();
    }
  }

  /** Buffers not released yet. */
  List<ByteBuf> unreleased() {
    List<ByteBuf> out = new ArrayList<>();
    synchronized (allocated) {
      for (ByteBuf b : allocated) {
        if (b.refCnt() > 0) {
          out.add(b);
        }
      }
    }
    return out;
  }

  /**
   * Waits (at most {@code limit}, only to let event loops finish closing connections) until every buffer
   * was released; fails listing the survivors otherwise. Forgets the released ones.
   */
  void awaitAllReleased(Duration limit) throws InterruptedException {
    long giveUp = System.nanoTime() + limit.toNanos();
    while (!unreleased().isEmpty() && System.nanoTime() < giveUp) {
      Thread.sleep(10);
    }
    List<ByteBuf> left = unreleased();
    if (!left.isEmpty()) {
      throw new AssertionError(left.size() + " buffer(s) not released: " + describe(left));
    }
    synchronized (allocated) {
      allocated.clear();
    }
  }

  private static String describe(List<ByteBuf> bufs) {
    StringBuilder sb = new StringBuilder();
    for (ByteBuf b : bufs.subList(0, Math.min(5, bufs.size()))) {
      sb.append(System.lineSeparator())
          .append("  ")
          .append(b)
          .append(" refCnt=")
          .append(b.refCnt());
    }
    return sb.toString();
  }

  private <T extends ByteBuf> T wrap(Supplier<T> s) {
    return track(s.get());
  }

  @Override
  public ByteBuf buffer() {
    return wrap(delegate::buffer);
  }

  @Override
  public ByteBuf buffer(int initialCapacity) {
    return wrap(() -> delegate.buffer(initialCapacity));
  }

  @Override
  public ByteBuf buffer(int initialCapacity, int maxCapacity) {
    return wrap(() -> delegate.buffer(initialCapacity, maxCapacity));
  }

  @Override
  public ByteBuf ioBuffer() {
    return wrap(delegate::ioBuffer);
  }

  @Override
  public ByteBuf ioBuffer(int initialCapacity) {
    return wrap(() -> delegate.ioBuffer(initialCapacity));
  }

  @Override
  public ByteBuf ioBuffer(int initialCapacity, int maxCapacity) {
    return wrap(() -> delegate.ioBuffer(initialCapacity, maxCapacity));
  }

  @Override
  public ByteBuf heapBuffer() {
    return wrap(delegate::heapBuffer);
  }

  @Override
  public ByteBuf heapBuffer(int initialCapacity) {
    return wrap(() -> delegate.heapBuffer(initialCapacity));
  }

  @Override
  public ByteBuf heapBuffer(int initialCapacity, int maxCapacity) {
    return wrap(() -> delegate.heapBuffer(initialCapacity, maxCapacity));
  }

  @Override
  public ByteBuf directBuffer() {
    return wrap(delegate::directBuffer);
  }

  @Override
  public ByteBuf directBuffer(int initialCapacity) {
    return wrap(() -> delegate.directBuffer(initialCapacity));
  }

  @Override
  public ByteBuf directBuffer(int initialCapacity, int maxCapacity) {
    return wrap(() -> delegate.directBuffer(initialCapacity, maxCapacity));
  }

  @Override
  public CompositeByteBuf compositeBuffer() {
    return wrap(delegate::compositeBuffer);
  }

  @Override
  public CompositeByteBuf compositeBuffer(int maxNumComponents) {
    return wrap(() -> delegate.compositeBuffer(maxNumComponents));
  }

  @Override
  public CompositeByteBuf compositeHeapBuffer() {
    return wrap(delegate::compositeHeapBuffer);
  }

  @Override
  public CompositeByteBuf compositeHeapBuffer(int maxNumComponents) {
    return wrap(() -> delegate.compositeHeapBuffer(maxNumComponents));
  }

  @Override
  public CompositeByteBuf compositeDirectBuffer() {
    return wrap(delegate::compositeDirectBuffer);
  }

  @Override
  public CompositeByteBuf compositeDirectBuffer(int maxNumComponents) {
    return wrap(() -> delegate.compositeDirectBuffer(maxNumComponents));
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
