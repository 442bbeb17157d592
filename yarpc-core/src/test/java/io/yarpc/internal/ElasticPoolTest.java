package io.yarpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ElasticPoolTest {
  private static final long LONG = TimeUnit.SECONDS.toMillis(30);

  private ElasticPool pool;

  @AfterEach
  void stop() throws InterruptedException {
    if (pool != null) {
      pool.shutdownNow();
      assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
  }

  private ElasticPool pool(int base, int max, long patienceMillis) {
    pool = new ElasticPool("test-elastic-", base, max, patienceMillis, LONG, TimeUnit.MILLISECONDS);
    return pool;
  }

  @Test
  void threadsAreNamedDaemons() throws Exception {
    pool(2, 4, LONG);
    CompletableFuture<Thread> first = new CompletableFuture<>();
    pool.execute(() -> first.complete(Thread.currentThread()));
    Thread t = first.get(10, TimeUnit.SECONDS);
    assertThat(t.getName()).isEqualTo("test-elastic-1");
    assertThat(t.isDaemon()).isTrue();
  }

  @Test
  void quickTasksRunOnTheBaseThreadsOnly() throws Exception {
    pool(2, 64, LONG); // no task waits 30 s, so no thread beyond the base starts
    Set<String> names = ConcurrentHashMap.newKeySet();
    int tasks = 20_000;
    CountDownLatch done = new CountDownLatch(tasks);
    for (int i = 0; i < tasks; i++) {
      pool.execute(
          () -> {
            names.add(Thread.currentThread().getName());
            done.countDown();
          });
    }
    assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
    assertThat(names).hasSizeBetween(1, 2);
    assertThat(pool.threads()).isLessThanOrEqualTo(2);
  }

  @Test
  void tasksThatBlockUntilAllRunGetAThreadEach() throws Exception {
    pool(2, 1024, 20);
    int tasks = 100; // each blocks until all have started: a fixed pool of 2 would never finish
    CountDownLatch started = new CountDownLatch(tasks);
    CountDownLatch finished = new CountDownLatch(tasks);
    for (int i = 0; i < tasks; i++) {
      pool.execute(
          () -> {
            started.countDown();
            try {
              if (started.await(30, TimeUnit.SECONDS)) {
                finished.countDown();
              }
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          });
    }
    assertThat(finished.await(30, TimeUnit.SECONDS)).as("all tasks ran at once").isTrue();
    assertThat(pool.threads()).isEqualTo(tasks);
  }

  @Test
  void aBlockedTaskDoesNotHoldUpTheNextWithoutNewTasksComing() throws Exception {
    pool(1, 8, 10);
    CountDownLatch release = new CountDownLatch(1);
    pool.execute(() -> awaitQuietly(release));
    CompletableFuture<String> next = new CompletableFuture<>();
    // queued behind the blocked task; no later execute comes to notice the wait: the timer's
    // look must
    pool.execute(() -> next.complete(Thread.currentThread().getName()));
    assertThat(next.get(10, TimeUnit.SECONDS)).isEqualTo("test-elastic-2");
    release.countDown();
  }

  @Test
  void aThreadBlockedLongerThanThePatienceDoesNotCountAgainstTheBase() throws Exception {
    pool(1, 8, 100);
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    pool.execute(
        () -> {
          started.countDown();
          awaitQuietly(release);
        });
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    Thread.sleep(150); // the task has run longer than the patience: its thread counts as blocked
    CompletableFuture<String> next = new CompletableFuture<>();
    pool.execute(() -> next.complete(Thread.currentThread().getName()));
    assertThat(next.get(10, TimeUnit.SECONDS)).isEqualTo("test-elastic-2");
    // handed a thread at once: it never waited for the timer's look at the queue
    assertThat(pool.looks()).isZero();
    release.countDown();
  }

  @Test
  void idleThreadsAreNotCountedAsBusyAgainstTheLimit() throws Exception {
    pool(1, 4, 10);
    CountDownLatch all = new CountDownLatch(4);
    for (int i = 0; i < 4; i++) {
      pool.execute(
          () -> {
            all.countDown();
            awaitQuietly(all); // four at once: four threads
          });
    }
    assertThat(all.await(10, TimeUnit.SECONDS)).isTrue();
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (pool.idleThreads() < 4 && System.nanoTime() < until) {
      Thread.sleep(5); // the four tasks return and their threads go idle
    }
    assertThat(pool.idleThreads()).isEqualTo(4);
    CountDownLatch release = new CountDownLatch(1);
    pool.execute(() -> awaitQuietly(release)); // one busy, three idle
    CountDownLatch ran = new CountDownLatch(5);
    for (int i = 0; i < 5; i++) {
      pool.execute(ran::countDown); // over maxThreads waiting, but idle threads can take them
    }
    assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(pool.threads()).isEqualTo(4);
    release.countDown();
  }

  @Test
  void afterShutdownAQueuedTaskThatABlockedOneWaitsForStillGetsAThread() throws Exception {
    pool(1, 4, 10);
    CountDownLatch second = new CountDownLatch(1);
    pool.execute(() -> awaitQuietly(second));
    pool.execute(second::countDown);
    pool.shutdown();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(second.getCount()).isZero();
  }

  @Test
  void aFailingExceptionHandlerLeavesItsThreadWorking() throws Exception {
    pool(1, 1, LONG);
    CompletableFuture<Thread> first = new CompletableFuture<>();
    pool.execute(
        () -> {
          first.complete(Thread.currentThread());
          Thread.currentThread()
              .setUncaughtExceptionHandler(
                  (t, e) -> {
                    throw new IllegalStateException("the handler fails too");
                  });
          throw new IllegalStateException("boom");
        });
    CompletableFuture<Thread> second = new CompletableFuture<>();
    pool.execute(() -> second.complete(Thread.currentThread()));
    assertThat(second.get(10, TimeUnit.SECONDS)).isSameAs(first.get(10, TimeUnit.SECONDS));
    pool.shutdown();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void tasksThatBlockOneAtATimeStillGetThreads() throws Exception {
    // handlers that each block a while: the queue moves, yet its tasks wait, so threads start
    pool(1, 64, 5);
    int tasks = 64;
    CountDownLatch done = new CountDownLatch(tasks);
    for (int i = 0; i < tasks; i++) {
      pool.execute(
          () -> {
            sleepQuietly(50);
            done.countDown();
          });
    }
    // on one thread the tasks would take 64 × 50 ms = 3.2 s; with threads started for waiting tasks
    // they overlap, which the thread count shows without timing anything
    assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
    assertThat(pool.threads()).isGreaterThan(8);
  }

  @Test
  void tasksBlockedInASocketReadGetThreads() throws Exception {
    // a handler that calls a database or service over a plain socket: to the JVM its thread is
    // RUNNABLE while it waits for the answer, like a thread that computes; the tasks queued
    // behind it must still get threads (a pool that kept such tasks on its base threads ran these
    // 32 calls two at a time); a patience of 10 ms, so that the rule for long tasks (16 patiences)
    // does not start threads for them before the answers (50 ms) come, even on a loaded machine
    pool(2, 64, 10);
    int tasks = 32;
    try (ServerSocket server = new ServerSocket(0, tasks, InetAddress.getLoopbackAddress())) {
      List<Socket> sockets = new ArrayList<>();
      try {
        for (int i = 0; i < tasks; i++) {
          Socket client = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
          sockets.add(client);
          Socket served = server.accept();
          sockets.add(served);
          Thread answer = new Thread(() -> answerAfter(served, 50), "test-slow-peer-" + i);
          answer.setDaemon(true);
          answer.start();
        }
        CountDownLatch done = new CountDownLatch(tasks);
        for (int i = 0; i < tasks; i++) {
          Socket client = sockets.get(2 * i);
          pool.execute(
              () -> {
                try {
                  client.getOutputStream().write(1);
                  if (client.getInputStream().read() == 1) {
                    done.countDown();
                  }
                } catch (IOException e) {
                  throw new UncheckedIOException(e);
                }
              });
        }
        assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
        assertThat(pool.threads()).isGreaterThan(8);
      } finally {
        for (Socket s : sockets) {
          s.close();
        }
      }
    }
  }

  /** Reads one byte from {@code s}, waits {@code millis}, answers with one byte. */
  private static void answerAfter(Socket s, long millis) {
    try {
      if (s.getInputStream().read() >= 0) {
        sleepQuietly(millis);
        s.getOutputStream().write(1);
        s.getOutputStream().flush();
      }
    } catch (IOException closed) {
      // the test is over
    }
  }

  @Test
  void tasksWaitingOnlyForBusyCoresStartNoThreads() throws Exception {
    // tasks that compute for longer than the patience, queued behind each other: they wait
    // because the one thread is working (RUNNABLE to the JVM, running or ready to run to the OS),
    // and another thread would only share the cores; a computing thread counts as blocked only
    // after 16 patiences (1.6 s here). Without the OS's view the pool cannot tell this thread from
    // one in a socket read.
    // (where the kernel hides wchan, a look that lands on a safepoint would count the thread)
    assumeTrue(osView() && OsThreadStateTest.wchanShown(), "no /proc/thread-self, or no wchan");
    pool(1, 64, 100);
    int tasks = 12;
    CountDownLatch done = new CountDownLatch(tasks);
    for (int i = 0; i < tasks; i++) {
      pool.execute(
          () -> {
            spinMillis(150);
            done.countDown();
          });
    }
    assertThat(done.await(60, TimeUnit.SECONDS)).isTrue();
    // the pool that started a thread for every task that waited a patience had 12 here; this one
    // 1, or up to 5 if a look catches the thread for a moment asleep outside a futex
    // (see OsThreadStateTest), which lets a blocked task start at most four
    assertThat(pool.threads()).isLessThanOrEqualTo(1 + ElasticPool.STARTS_PER_BLOCKED_TASK);
    assertThat(pool.looks()).as("the waiting tasks were looked at").isPositive();
  }

  @Test
  void oneBlockedThreadDoesNotStartAThreadForEveryWaitingTask() throws Exception {
    // one task blocks for a while (60 ms) in front of many that compute: the queue waits behind
    // the computing ones, not behind the blocked one, so it gets threads to keep the base working
    // and at most four more for the blocked one, not a thread per waiting task
    pool(1, 128, 20);
    CountDownLatch done = new CountDownLatch(61);
    pool.execute(
        () -> {
          sleepQuietly(60);
          done.countDown();
        });
    for (int i = 0; i < 60; i++) {
      pool.execute(
          () -> {
            spinMillis(30);
            done.countDown();
          });
    }
    assertThat(done.await(60, TimeUnit.SECONDS)).isTrue();
    // (the pool that started a thread for every task that waited a patience while any thread was
    // blocked had 61 here)
    assertThat(pool.threads()).isLessThan(30);
  }

  @Test
  void aThreadBlockedForGoodStartsAFewThreadsNotOnePerLook() throws Exception {
    // one task blocks until the end, in front of tasks that compute: it may start a few threads
    // for them (it cannot tell they only wait for cores), then no more, however many looks come
    pool(1, 256, 2);
    CountDownLatch release = new CountDownLatch(1);
    pool.execute(() -> awaitQuietly(release));
    int tasks = 200;
    CountDownLatch done = new CountDownLatch(tasks);
    try {
      for (int i = 0; i < tasks; i++) {
        pool.execute(
            () -> {
              spinMillis(5);
              done.countDown();
            });
      }
      assertThat(done.await(60, TimeUnit.SECONDS)).isTrue();
      // the blocked one and its four (5 here on a quiet machine); a thread whose task ran 32 ms
      // (16 patiences) while the cores were busy counts as blocked too, with its four. A pool that
      // started a thread per blocked thread at every look had 36.
      assertThat(pool.threads()).isLessThan(20);
      assertThat(pool.looks()).as("looked at often").isGreaterThan(20);
    } finally {
      release.countDown();
    }
  }

  @Test
  void aThreadComputingForLongCountsAsBlocked() throws Exception {
    // a task that keeps its thread running for 16 patiences no longer holds the queue back
    pool(1, 8, 5);
    AtomicBoolean stop = new AtomicBoolean();
    pool.execute(
        () -> {
          while (!stop.get()) {
            Thread.onSpinWait();
          }
        });
    CompletableFuture<String> next = new CompletableFuture<>();
    pool.execute(() -> next.complete(Thread.currentThread().getName()));
    try {
      assertThat(next.get(10, TimeUnit.SECONDS)).isEqualTo("test-elastic-2");
    } finally {
      stop.set(true);
    }
  }

  @Test
  void aTaskOverTheLimitIsRejectedAndTheQueuedOneStillRuns() throws Exception {
    pool(1, 1, 10);
    CountDownLatch release = new CountDownLatch(1);
    pool.execute(() -> awaitQuietly(release));
    CompletableFuture<Void> queued = new CompletableFuture<>();
    pool.execute(() -> queued.complete(null)); // one thread busy, one task waiting: the limit
    assertThatThrownBy(() -> pool.execute(() -> {}))
        .isInstanceOf(RejectedExecutionException.class)
        .hasMessage("1 threads are busy and 1 tasks wait");
    release.countDown();
    queued.get(10, TimeUnit.SECONDS);
    assertThat(pool.threads()).isEqualTo(1);
  }

  @Test
  void aThrowingTaskLeavesItsThreadWorking() throws Exception {
    pool(1, 1, LONG);
    CompletableFuture<Thread> first = new CompletableFuture<>();
    pool.execute(
        () -> {
          first.complete(Thread.currentThread());
          Thread.currentThread().setUncaughtExceptionHandler((t, e) -> {}); // keep the log quiet
          throw new IllegalStateException("boom");
        });
    CompletableFuture<Thread> second = new CompletableFuture<>();
    pool.execute(() -> second.complete(Thread.currentThread()));
    assertThat(second.get(10, TimeUnit.SECONDS)).isSameAs(first.get(10, TimeUnit.SECONDS));
  }

  @Test
  void aTasksInterruptDoesNotReachTheNextTask() throws Exception {
    pool(1, 1, LONG);
    pool.execute(() -> Thread.currentThread().interrupt());
    CompletableFuture<Boolean> interrupted = new CompletableFuture<>();
    pool.execute(() -> interrupted.complete(Thread.currentThread().isInterrupted()));
    assertThat(interrupted.get(10, TimeUnit.SECONDS)).isFalse();
    // and the idle thread parks instead of spinning on a pending interrupt: it is still
    // there, waiting
    Thread.sleep(50);
    assertThat(pool.threads()).isEqualTo(1);
  }

  @Test
  void idleThreadsEnd() throws Exception {
    pool = new ElasticPool("test-elastic-", 2, 8, 5, 50, TimeUnit.MILLISECONDS);
    CountDownLatch ran = new CountDownLatch(2);
    CountDownLatch release = new CountDownLatch(1);
    for (int i = 0; i < 2; i++) {
      pool.execute(
          () -> {
            ran.countDown();
            awaitQuietly(release);
          });
    }
    assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(pool.threads()).isEqualTo(2);
    release.countDown();
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (pool.threads() > 0 && System.nanoTime() < until) {
      Thread.sleep(10);
    }
    assertThat(pool.threads()).isZero();
    CompletableFuture<Void> again = new CompletableFuture<>();
    pool.execute(() -> again.complete(null)); // and a task after that starts one again
    again.get(10, TimeUnit.SECONDS);
  }

  @Test
  void shutdownRunsTheQueuedTasksThenRejects() throws Exception {
    pool(1, 4, LONG);
    CountDownLatch release = new CountDownLatch(1);
    pool.execute(() -> awaitQuietly(release));
    AtomicInteger ran = new AtomicInteger();
    for (int i = 0; i < 3; i++) {
      pool.execute(ran::incrementAndGet);
    }
    pool.shutdown();
    assertThatThrownBy(() -> pool.execute(() -> {}))
        .isInstanceOf(RejectedExecutionException.class)
        .hasMessage("the pool is shut down");
    assertThat(pool.isShutdown()).isTrue();
    assertThat(pool.awaitTermination(50, TimeUnit.MILLISECONDS)).isFalse();
    release.countDown();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(ran).hasValue(3);
    assertThat(pool.isTerminated()).isTrue();
  }

  @Test
  void shutdownNowReturnsTheQueuedTasksAndInterruptsTheRunningOnes() throws Exception {
    pool(1, 4, LONG);
    CountDownLatch running = new CountDownLatch(1);
    AtomicBoolean interrupted = new AtomicBoolean();
    pool.execute(
        () -> {
          running.countDown();
          try {
            Thread.sleep(LONG);
          } catch (InterruptedException e) {
            interrupted.set(true);
          }
        });
    assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
    Runnable waiting = () -> {};
    pool.execute(waiting);
    List<Runnable> left = pool.shutdownNow();
    assertThat(left).containsExactly(waiting);
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(interrupted).isTrue();
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static boolean osView() {
    return OsThreadState.ofCurrentThread() != null;
  }

  /** Keeps the thread running for {@code millis}, as a handler that computes does. */
  private static void spinMillis(long millis) {
    long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    while (System.nanoTime() < until) {
      Thread.onSpinWait();
    }
  }

  private static void sleepQuietly(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
