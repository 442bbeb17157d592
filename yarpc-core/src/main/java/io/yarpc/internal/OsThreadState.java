package io.yarpc.internal;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Whether a thread that is {@code RUNNABLE} to the JVM waits in the kernel for the world (a socket, a
 * pipe, a disk) as the operating system sees it: the difference between a thread that computes or waits
 * for a core and one that waits in a socket read, which {@link Thread#getState()} does not make.
 *
 * <p>Linux only ({@code man 5 proc}): the state letter in the thread's {@code stat} under {@code
 * /proc/self/task} ({@code R} running or ready to run; {@code S} asleep; {@code D} in uninterruptible
 * disk wait) and, for a thread asleep, the kernel function it sleeps in, its {@code wchan}. A thread
 * asleep on a futex does not count: a {@code RUNNABLE} thread there is in the JVM's own machinery
 * (stopped for a safepoint or a collection, a handshake, a VM lock, waiting for another thread to
 * initialise a class) or in native code waiting on a pthread lock, and Java code that waits makes the
 * thread {@code WAITING} or {@code BLOCKED}, which callers look at first. Each look opens, reads and
 * closes the files (about 10 µs; no descriptor is held between looks). Where {@code /proc} is not
 * mounted, or not Linux, {@link #ofCurrentThread} returns null and the caller has no view; where the
 * kernel hides {@code wchan} (it reads {@code 0}), every sleep counts.
 *
 * <p>Not thread-safe: one reader at a time (the {@link ElasticPool} reads under its lock).
 */
final class OsThreadState {
  private static final byte[] FUTEX = {'f', 'u', 't', 'e', 'x'};

  private final String stat;
  private final String wchan;
  private final byte[] buf = new byte[64]; // "tid (comm) S ...": comm is at most 16 bytes

  private OsThreadState(String taskDir) {
    this.stat = taskDir + "/stat";
    this.wchan = taskDir + "/wchan";
  }

  /** The calling thread's state, or null when the operating system does not show it. */
  static OsThreadState ofCurrentThread() {
    try {
      // "<pid>/task/<tid>": the calling thread's own directory
      Path self = Files.readSymbolicLink(Path.of("/proc/thread-self"));
      OsThreadState s = new OsThreadState("/proc/" + self);
      return s.letter() == 0 ? null : s;
    } catch (IOException | RuntimeException e) { // not Linux: no such file, or links unsupported
      return null;
    }
  }

  /**
   * Whether the thread waits in the kernel at this moment, not on a futex (see the class comment); false
   * when its state cannot be read (the thread has ended).
   */
  boolean waitsInTheKernel() {
    // wchan reads "0" while the thread runs: if it woke between the two reads, look again (a few
    // times; a kernel that hides wchan reads "0" every time, and then every sleep counts)
    for (int tries = 0; tries < 3; tries++) {
      if (!asleep(letter())) {
        return false;
      }
      int n = read(wchan);
      if (n > 1 || (n == 1 && buf[0] != '0')) {
        return !startsWithFutex(n);
      }
    }
    return true;
  }

  /**
   * Whether {@code state} is a sleep: not running ({@code R}), not unreadable (0), and not a thread that
   * is exiting ({@code Z} zombie, {@code X}/{@code x} dead), whose wchan reads "0" as a running thread's
   * does and which waits for nothing.
   */
  private static boolean asleep(char state) {
    return state != 0 && state != 'R' && state != 'Z' && state != 'X' && state != 'x';
  }

  /** The state letter, or 0 when it cannot be read. */
  private char letter() {
    int n = read(stat);
    // the name in brackets may itself hold spaces and brackets: the state follows the last ')'
    for (int i = n - 1; i > 0; i--) {
      if (buf[i] == ')') {
        return i + 2 < n && buf[i + 1] == ' ' ? (char) buf[i + 2] : 0;
      }
    }
    return 0;
  }

  /** Whether the {@code n} bytes read name a futex's function ({@code futex_wait_queue} and kin). */
  private boolean startsWithFutex(int n) {
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

  /** Reads the start of {@code path} into {@code buf}: the byte count, or -1 when it cannot be read. */
  private int read(String path) {
    try (RandomAccessFile f = new RandomAccessFile(path, "r")) {
      return f.read(buf);
    } catch (IOException e) {
      return -1; // the thread has ended
    }
  }
}
