package io.yarpc.internal;

import java.io.IOException;
import java.io.RandomAccessFile;

/**
 * Whether a thread that is {@code RUNNABLE} to the JVM waits in the kernel for the world (a socket, a
 * pipe, a disk) as the operating system sees it: the difference between a thread that computes or waits
 * for a core and one that waits in a socket read, which {@link Thread#getState()} does not make.
 *
 * <p>Linux only ({@code man 5 proc}), from files the thread opens for itself ({@link #ofCurrentThread})
 * and anyone may read again, about 4 µs a read: the state letter in {@code /proc/thread-self/stat} ({@code
 * R} running or ready to run; {@code S} asleep; {@code D} in uninterruptible disk wait) and, for a thread
 * asleep, the kernel function it sleeps in, {@code /proc/thread-self/wchan}. A {@code RUNNABLE} thread
 * asleep on a futex is in the JVM's own machinery (stopped for a safepoint or a collection, a handshake,
 * a VM lock; waits in Java code make the thread {@code WAITING} or {@code BLOCKED}), which ends by itself
 * and which more threads would not shorten, so it does not count. Elsewhere, or where {@code /proc} is
 * not mounted, {@link #ofCurrentThread} returns null and the caller has no view; where {@code wchan} is
 * hidden (it reads {@code 0}), every sleep counts.
 *
 * <p>Not thread-safe: one reader at a time (the {@link ElasticPool} reads under its lock).
 */
final class OsThreadState implements AutoCloseable {
  private static final byte[] FUTEX = {'f', 'u', 't', 'e', 'x'};

  private final RandomAccessFile stat;
  private final RandomAccessFile wchan;
  private final byte[] buf = new byte[64]; // "tid (comm) S ...": comm is at most 16 bytes

  private OsThreadState(RandomAccessFile stat, RandomAccessFile wchan) {
    this.stat = stat;
    this.wchan = wchan;
  }

  /** The calling thread's state, or null when the operating system does not show it. */
  static OsThreadState ofCurrentThread() {
    RandomAccessFile stat = null;
    try {
      stat = new RandomAccessFile("/proc/thread-self/stat", "r");
      OsThreadState s =
          new OsThreadState(stat, new RandomAccessFile("/proc/thread-self/wchan", "r"));
      if (s.letter() == 0) {
        s.close();
        return null;
      }
      return s;
    } catch (IOException | SecurityException e) {
      if (stat != null) {
        close(stat);
      }
      return null;
    }
  }

  /**
   * Whether the thread waits in the kernel at this moment, not on a futex (see the class comment); false
   * when the state cannot be read (the thread has ended).
   */
  boolean waitsInTheKernel() {
    char c = letter();
    return c != 0 && c != 'R' && !onFutex();
  }

  /** The state letter, or 0 when it cannot be read. */
  private char letter() {
    int n = readFromStart(stat);
    // the name in brackets may itself hold spaces and brackets: the state follows the last ')'
    for (int i = n - 1; i > 0; i--) {
      if (buf[i] == ')') {
        return i + 2 < n && buf[i + 1] == ' ' ? (char) buf[i + 2] : 0;
      }
    }
    return 0;
  }

  /** Whether the kernel function the thread sleeps in is a futex's ({@code futex_wait_queue} and kin). */
  private boolean onFutex() {
    int n = readFromStart(wchan);
    if (n < FUTEX.length) {
      return false;
    }
    for (int i = 0; i < FUTEX.length; i++) {
      if (buf[i] != FUTEX[i]) {
        return false;
      }
    }
    return true;
  }

  /** Reads the start of {@code f} into {@code buf}: the byte count, or -1 when it cannot be read. */
  private int readFromStart(RandomAccessFile f) {
    try {
      f.seek(0); // procfs makes the text afresh for a read from the start
      return f.read(buf);
    } catch (IOException e) {
      return -1; // the thread has ended ("No such process")
    }
  }

  @Override
  public void close() {
    close(stat);
    close(wchan);
  }

  private static void close(RandomAccessFile f) {
    try {
      f.close();
    } catch (IOException ignored) {
      // a read-only file: nothing was left unwritten
    }
  }
}
