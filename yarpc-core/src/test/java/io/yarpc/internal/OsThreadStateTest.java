package io.yarpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
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
    OsThreadState s = OsThreadState.ofCurrentThread();
    assumeTrue(s != null, "no /proc/thread-self/stat here");
    s.close();
  }

  @Test
  void aThreadThatComputesIsAwakeAndOneInASocketReadIsAsleep() throws Exception {
    // the case the JVM cannot tell apart: both threads are RUNNABLE to it
    AtomicBoolean stop = new AtomicBoolean();
    try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        Socket client = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
        Socket served = server.accept()) {
      Probe spinning =
          Probe.start(
              "test-spinning",
              () -> {
                while (!stop.get()) {
                  Thread.onSpinWait();
                }
              });
      Probe reading =
          Probe.start(
              "test-reading",
              () -> {
                try (InputStream in = served.getInputStream()) {
                  in.read();
                } catch (IOException ignored) {
                  // closed at the end of the test
                }
              });
      try {
        assertThat(
                eventually(
                    () ->
                        reading.thread.getState() == Thread.State.RUNNABLE
                            && reading.state.asleep()))
            .as("RUNNABLE to the JVM and asleep to the OS while it waits in read()")
            .isTrue();
        assertThat(spinning.thread.getState()).isEqualTo(Thread.State.RUNNABLE);
        // on a busy machine the spinning thread may be read while ready to run: still R, not asleep
        for (int i = 0; i < 20; i++) {
          assertThat(spinning.state.asleep()).as("read %d of a computing thread", i).isFalse();
        }
      } finally {
        stop.set(true);
        client.getOutputStream().write(1);
        spinning.thread.join(10_000);
        reading.thread.join(10_000);
      }
      // a thread that has ended reads as not asleep (nothing to wait for), and closing is quiet
      assertThat(spinning.thread.isAlive()).isFalse();
      assertThat(spinning.state.asleep()).isFalse();
      spinning.state.close();
      reading.state.close();
    }
  }

  @Test
  void aSleepingThreadIsAsleepWhateverItsName() throws Exception {
    // the state follows the name in brackets, which may itself hold brackets and spaces
    CountDownLatch release = new CountDownLatch(1);
    Probe p =
        Probe.start(
            "a) b (c) R",
            () -> {
              try {
                release.await(30, TimeUnit.SECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    try {
      assertThat(eventually(p.state::asleep)).isTrue();
    } finally {
      release.countDown();
      p.thread.join(10_000);
      p.state.close();
    }
  }

  /** A thread running {@code body} after it has opened its own state. */
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
