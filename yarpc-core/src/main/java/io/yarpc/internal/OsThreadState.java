package io.yarpc.internal;

import java.io.IOException;
import java.io.RandomAccessFile;

/**
 * Whether one thread is asleep as the operating system sees it: the difference between a thread that
 * computes or waits for a core and one that waits in a socket read, which {@link Thread#getState()}
 * does not make (a thread in native I/O is {@code RUNNABLE} to the JVM either way).
 *
 * <p>Linux only: the thread's state letter in {@code /proc/thread-self/stat} ({@code man 5 proc}: {@code
 * R} running or ready to run; {@code S} asleep, as in a socket read, a futex or a sleep; {@code D} in
 * uninterruptible disk wait), from a file the thread opens for itself ({@link #ofCurrentThread}) and
 * anyone may read again; about 4 µs per read. Elsewhere, or where {@code /proc} is not mounted, {@link
 * #ofCurrentThread} returns null and the caller has no view.
 *
 * <p>Not thread-safe: one reader at a time (the {@link ElasticPool} reads under its lock).
 */
final class OsThreadState implements AutoCloseable {
  private static final String PATH = "/proc/thread-self/stat";

  private final RandomAccessFile stat;
  private final byte[] buf = new byte[64]; // "tid (comm) S ...": comm is at most 16 bytes

  private OsThreadState(RandomAccessFile stat) {
    this.stat = stat;
  }

  /** The calling thread's state, or null when the operating system does not show it. */
  static OsThreadState ofCurrentThread() {
    try {
      OsThreadState s = new OsThreadState(new RandomAccessFile(PATH, "r"));
      if (s.letter() == 0) {
        s.close();
        return null;
      }
      return s;
    } catch (IOException | SecurityException e) {
      return null;
    }
  }

  /**
   * Whether the thread is asleep (any state but {@code R}) at this moment; false when the state cannot be
   * read (the thread has ended).
   */
  boolean asleep() {
    char c = letter();
    return c != 0 && c != 'R';
  }

  /** The state letter, or 0 when it cannot be read. */
  private char letter() {
    int n;
    try {
      stat.seek(0); // procfs makes the line afresh for a read from the start
      n = stat.read(buf);
    } catch (IOException e) {
      return 0; // the thread has ended ("No such process")
    }
    // the name in brackets may itself hold spaces and brackets: the state follows the last ')'
    for (int i = n - 1; i > 0; i--) {
      if (buf[i] == ')') {
        return i + 2 < n && buf[i + 1] == ' ' ? (char) buf[i + 2] : 0;
      }
    }
    return 0;
  }

  @Override
  public void close() {
    try {
      stat.close();
    } catch (IOException ignored) {
      // a read-only file: nothing was left unwritten
    }
  }
}
