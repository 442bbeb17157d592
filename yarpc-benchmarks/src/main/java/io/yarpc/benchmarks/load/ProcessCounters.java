package io.yarpc.benchmarks.load;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;

/**
 * Whole-process counters of this JVM at one instant: CPU time of all its threads (GC and JIT included,
 * from {@code com.sun.management.OperatingSystemMXBean#getProcessCpuTime}), heap bytes allocated by its
 * live threads ({@code com.sun.management.ThreadMXBean#getThreadAllocatedBytes} summed; a thread that ended
 * takes its bytes with it), and garbage collections so far. Sent as one line between {@link
 * ServerProcess} and {@link ServerChild}.
 *
 * @param cpuNanos process CPU time so far
 * @param allocatedBytes heap bytes the live threads allocated so far
 * @param gcCount collections so far, over all collectors
 * @param gcMillis milliseconds the collectors reported so far
 */
record ProcessCounters(long cpuNanos, long allocatedBytes, long gcCount, long gcMillis) {
  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  /** This process's counters now. */
  static ProcessCounters now() {
    long allocated = 0;
    for (long bytes : THREADS.getThreadAllocatedBytes(THREADS.getAllThreadIds())) {
      allocated += Math.max(0, bytes); // -1 for a thread that ended meanwhile
    }
    long count = 0;
    long millis = 0;
    for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans()) {
      count += Math.max(0, b.getCollectionCount());
      millis += Math.max(0, b.getCollectionTime());
    }
    long cpu =
        ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
            .getProcessCpuTime();
    return new ProcessCounters(cpu, allocated, count, millis);
  }

  /** What happened between {@code earlier} and this (allocation never below zero). */
  ProcessCounters minus(ProcessCounters earlier) {
    return new ProcessCounters(
        cpuNanos - earlier.cpuNanos,
        Math.max(0, allocatedBytes - earlier.allocatedBytes),
        gcCount - earlier.gcCount,
        gcMillis - earlier.gcMillis);
  }

  /** The line {@link #parse} reads: {@code counters CPU BYTES GC_COUNT GC_MILLIS}. */
  String toLine() {
    return "counters " + cpuNanos + " " + allocatedBytes + " " + gcCount + " " + gcMillis;
  }

  /**
   * The counters {@link #toLine} wrote.
   *
   * @throws IllegalArgumentException when {@code line} is not such a line
   */
  static ProcessCounters parse(String line) {
    String[] f = line.split(" ");
    if (f.length != 5 || !f[0].equals("counters")) {
      throw new IllegalArgumentException("not a counters line: " + line);
    }
    try {
      return new ProcessCounters(
          Long.parseLong(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3]), Long.parseLong(f[4]));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("not a counters line: " + line, e);
    }
  }
}
