package io.yarpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class OsThreadStateTest {
  @BeforeAll
  static void linuxOnly() {
    assumeTrue(OsThreadState.ofCurrentThread() != null, "no /proc/thread-self here");
  }

  @Test
  void aThreadInASocketReadWaitsInTheKernelAndOneThatComputesDoesNot() throws Exception {
    // the case the JVM cannot tell apart: both threads are RUNNABLE to it
    AtomicBoolean stop = new AtomicBoolean();
    try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        Socket client = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
        Socket served = server.accept()) {
      // the name in brackets in /proc may itself hold brackets and spaces: the state follows the
      // last ')' (read after the first, this thread would be in state 'b', asleep)
      Probe spinning =
          Probe.start(
              "a) b (c) R",
              () -> {
                while (!stop.get()) {
                  Thread.onSpinWait();
                }
              });
      Probe reading = Probe.start("test-reading", () -> readOneByte(served));
      try {
        assertThat(
                eventually(
                    () ->
                        reading.thread.getState() == Thread.State.RUNNABLE
                            && reading.state.waitsInTheKernel()))
            .as("RUNNABLE to the JVM and waiting in the kernel while it is in read()")
            .isTrue();
        assertThat(spinning.thread.getState()).isEqualTo(Thread.State.RUNNABLE);
        // where the kernel hides wchan, a spinning thread stopped for a safepoint counts too
        assumeTrue(wchanShown(), "the kernel hides wchan here");
        // on a busy machine the spinning thread may be read while ready to run: R all the same. It
        // can also be caught for a moment asleep in the kernel outside a futex (seen once in CI,
        // 1 read of 20, cause not found; a page fault waiting for the memory map's lock is one
        // way), so a few reads may say it waits; a wrong parser or rule says so every time
        assertThat(readsThatWait(spinning.state))
            .as("of 20 reads of a computing thread")
            .isLessThan(5);
      } finally {
        stop.set(true);
        client.getOutputStream().write(1);
        spinning.thread.join(10_000);
        reading.thread.join(10_000);
      }
      // a thread that has ended does not wait: its native thread outlives the Java one for a moment
      // (exiting, or a zombie, whose wchan reads "0"; seen once in CI), then its /proc entry goes
      assertThat(spinning.thread.isAlive()).isFalse();
      assertThat(eventually(() -> !spinning.state.waitsInTheKernel())).isTrue();
    }
  }

  @Test
  void aThreadParkedByTheJvmDoesNotWaitInTheKernel() throws Exception {
    // asleep on a futex, as a thread stopped for a safepoint is: the JVM's own wait (a parked
    // thread is also TIMED_WAITING to the JVM, which the pool looks at first; this test is about
    // what /proc says)
    assumeTrue(wchanShown(), "the kernel hides wchan here");
    CountDownLatch release = new CountDownLatch(1);
    Probe parked = Probe.start("test-parked", () -> awaitQuietly(release));
    try {
      assertThat(eventually(() -> parked.thread.getState() == Thread.State.TIMED_WAITING)).isTrue();
      Thread.sleep(20); // the JVM shows the state just before the thread reaches its futex
      assertThat(readsThatWait(parked.state)).as("of 20 reads of a parked thread").isLessThan(5);
    } finally {
      release.countDown();
      parked.thread.join(10_000);
    }
  }

  /**
   * Whether the kernel shows where threads sleep: the JVM's first thread waits for the launcher's
   * whole life, so its wchan names a function unless the kernel hides it.
   */
  static boolean wchanShown() {
    try {
      String w = Files.readString(Path.of("/proc/self/wchan"));
      return !w.isEmpty() && !w.equals("0");
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  /** A thread running {@code body} after it has found its own state. */
  private record Probe(Thread thread, OsThreadState state) {
    static Probe start(String name, Runnable body) throws Exception {
      CompletableFuture<OsThreadState> opened = new CompletableFuture<>();
      Thread t =
          new Thread(
              () -> {
                opened.complete(OsThreadState.ofCurrentThread());
                body.run();
              },
              name);
      t.setDaemon(true);
      t.start();
      OsThreadState s = opened.get(10, TimeUnit.SECONDS);
      assertThat(s).isNotNull();
      return new Probe(t, s);
    }
  }

  /** Of 20 reads a millisecond apart, how many say the thread waits in the kernel. */
  private static int readsThatWait(OsThreadState state) throws InterruptedException {
    int n = 0;
    for (int i = 0; i < 20; i++) {
      if (state.waitsInTheKernel()) {
        n++;
      }
      Thread.sleep(1);
    }
    return n;
  }

  private static void readOneByte(Socket s) {
    try (InputStream in = s.getInputStream()) {
      in.read();
    } catch (IOException ignored) {
      // closed at the end of the test
    }
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static boolean eventually(BooleanSupplier condition) throws InterruptedException {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < until) {
      if (condition.getAsBoolean()) {
        return true;
      }
      Thread.sleep(5);
    }
    return false;
  }
}
