package io.yarpc.testing;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * What a server retains, taken before an attack and compared after it, for attack tests that must show
 * the memory an attack made the server hold was given back: the Java heap that survives a full garbage
 * collection, plus the pooled buffers still in use ({@linkplain PooledByteBufAllocator#pinnedDirectMemory()
 * pinned}) in the given allocators ({@link PooledByteBufAllocator#DEFAULT} is always included).
 *
 * <pre>{@code
 * MemoryBaseline before = MemoryBaseline.take();
 * ... attack, close the attacking connections ...
 * before.awaitReturned(Duration.ofSeconds(10), 16 << 20); // within 16 MiB of the baseline
 * }</pre>
 *
 * <p>Run attack tests in a JVM of their own or accept some noise from other tests: the slack absorbs
 * what the test itself and concurrent tests keep. Not thread-safe.
 */
public final class MemoryBaseline {
  private final List<PooledByteBufAllocator> pools;
  private final long heap;
  private final long pinned;

  private MemoryBaseline(List<PooledByteBufAllocator> pools) {
    this.pools = pools;
    this.heap = retainedHeap();
    this.pinned = pinned(pools);
  }

  /**
   * The retained memory now, counting {@link PooledByteBufAllocator#DEFAULT} and those of {@code
   * allocators} that are pooled.
   */
  public static MemoryBaseline take(ByteBufAllocator... allocators) {
    List<PooledByteBufAllocator> pools = new ArrayList<>();
    pools.add(PooledByteBufAllocator.DEFAULT);
    for (ByteBufAllocator a : allocators) {
      if (a instanceof PooledByteBufAllocator && !pools.contains(a)) {
        pools.add((PooledByteBufAllocator) a);
      }
    }
    return new MemoryBaseline(pools);
  }

  /** Retained heap at the baseline, in bytes. */
  public long heap() {
    return heap;
  }

  /** Pooled buffer bytes in use at the baseline. */
  public long pinned() {
    return pinned;
  }

  /**
   * Waits until the retained heap and the pooled bytes in use are each back within {@code slackBytes} of
   * the baseline, collecting garbage as it polls.
   *
   * @throws AssertionError naming both figures when they are not back within {@code timeout}
   */
  public void awaitReturned(Duration timeout, long slackBytes) {
    long deadline = System.nanoTime() + timeout.toNanos();
    long heapNow;
    long pinnedNow;
    while (true) {
      heapNow = retainedHeap();
      pinnedNow = pinned(pools);
      if (heapNow - heap <= slackBytes && pinnedNow - pinned <= slackBytes) {
        return;
      }
      if (System.nanoTime() - deadline > 0) {
        break;
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    throw new AssertionError(
        String.format(
            "memory not back to its baseline within %s (slack %,d bytes): retained heap %,d -> %,d,"
                + " pooled buffers in use %,d -> %,d",
            timeout, slackBytes, heap, heapNow, pinned, pinnedNow));
  }

  private static long pinned(List<PooledByteBufAllocator> pools) {
    long sum = 0;
    for (PooledByteBufAllocator p : pools) {
      sum += p.pinnedDirectMemory() + p.pinnedHeapMemory();
    }
    return sum;
  }

  private static long retainedHeap() {
    MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    System.gc();
    System.gc();
    return memory.getHeapMemoryUsage().getUsed();
  }
}
