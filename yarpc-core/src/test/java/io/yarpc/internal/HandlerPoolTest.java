package io.yarpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

class HandlerPoolTest {
  private static final long MINUTE = TimeUnit.MINUTES.toNanos(1);

  @Test
  void anIdleThreadIsReusedRatherThanANewOneStarted() throws Exception {
    HandlerPool pool = new HandlerPool("test-pool-reuse-", 4, MINUTE);
    AtomicReference<String> first = new AtomicReference<>();
    CountDownLatch ran = new CountDownLatch(1);
    pool.execute(
        () -> {
          first.set(Thread.currentThread().getName());
          ran.countDown();
        });
    assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    awaitTrue(() -> pool.idleThreads() == 1);
    AtomicReference<String> second = new AtomicReference<>();
    CountDownLatch ranAgain = new CountDownLatch(1);
    pool.execute(
        () -> {
          second.set(Thread.currentThread().getName());
          ranAgain.countDown();
        });
    assertThat(ranAgain.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(second.get()).isEqualTo(first.get()).startsWith("test-pool-reuse-");
    assertThat(pool.threads()).isEqualTo(1);
    pool.shutdown();
  }

  @Test
  void aTaskBeyondTheMaximumIsRejectedUntilAThreadIsFree() throws Exception {
    HandlerPool pool = new HandlerPool("test-pool-max-", 2, MINUTE);
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch started = new CountDownLatch(2);
    for (int i = 0; i < 2; i++) {
      pool.execute(
          () -> {
            started.countDown();
            awaitQuietly(release);
          });
    }
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    assertThatThrownBy(() -> pool.execute(() -> {}))
        .isInstanceOf(RejectedExecutionException.class)
        .hasMessage("all 2 handler threads are busy");
    release.countDown();
    awaitTrue(() -> pool.idleThreads() == 2);
    CountDownLatch ran = new CountDownLatch(1);
    pool.execute(ran::countDown);
    assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(pool.threads()).isEqualTo(2);
    pool.shutdown();
  }

  @Test
  void anIdleThreadEndsAfterItsKeepAlive() throws Exception {
    HandlerPool pool =
        new HandlerPool("test-pool-keep-alive-", 4, TimeUnit.MILLISECONDS.toNanos(20));
    CountDownLatch ran = new CountDownLatch(1);
    pool.execute(ran::countDown);
    assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    awaitTrue(() -> pool.threads() == 0);
    assertThat(pool.threads()).isZero();
    assertThat(pool.idleThreads()).isZero();
    CountDownLatch again = new CountDownLatch(1);
    pool.execute(again::countDown); // a new thread
    assertThat(again.await(10, TimeUnit.SECONDS)).isTrue();
    pool.shutdown();
  }

  @Test
  void aFailingTaskKeepsItsThread() throws Exception {
    HandlerPool pool = new HandlerPool("test-pool-failing-", 1, MINUTE);
    pool.execute(
        () -> {
          throw new IllegalStateException("deliberate");
        });
    awaitTrue(() -> pool.idleThreads() == 1);
    CountDownLatch ran = new CountDownLatch(1);
    pool.execute(ran::countDown);
    assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(pool.threads()).isEqualTo(1);
    pool.shutdown();
  }

  @Test
  void shutdownRefusesNewTasksAndLetsRunningOnesFinish() throws Exception {
    HandlerPool pool = new HandlerPool("test-pool-shutdown-", 4, MINUTE);
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch started = new CountDownLatch(1);
    AtomicInteger finished = new AtomicInteger();
    pool.execute(
        () -> {
          started.countDown();
          awaitQuietly(release);
          finished.incrementAndGet();
        });
    pool.execute(() -> {});
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    awaitTrue(() -> pool.idleThreads() == 1);
    pool.shutdown();
    assertThat(pool.isShutdown()).isTrue();
    assertThatThrownBy(() -> pool.execute(() -> {}))
        .isInstanceOf(RejectedExecutionException.class)
        .hasMessage("the handler pool is shut down");
    assertThat(pool.isTerminated()).as("a task still runs").isFalse();
    release.countDown();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(finished).hasValue(1);
    assertThat(pool.threads()).isZero();
  }

  @Test
  void underManySubmittersEveryAcceptedTaskRunsExactlyOnce() throws Exception {
    HandlerPool pool = new HandlerPool("test-pool-concurrent-", 16, MINUTE);
    int submitters = 4;
    int perSubmitter = 20_000;
    AtomicIntegerArray runs = new AtomicIntegerArray(submitters * perSubmitter);
    AtomicInteger accepted = new AtomicInteger();
    AtomicInteger ran = new AtomicInteger();
    CyclicBarrier start = new CyclicBarrier(submitters);
    ExecutorService threads = Executors.newFixedThreadPool(submitters);
    List<Integer> rejected = new ArrayList<>();
    try {
      List<Future<List<Integer>>> done = new ArrayList<>();
      for (int s = 0; s < submitters; s++) {
        int base = s * perSubmitter;
        done.add(
            threads.submit(
                () -> {
                  start.await();
                  List<Integer> mine = new ArrayList<>();
                  for (int i = 0; i < perSubmitter; i++) {
                    int id = base + i;
                    try {
                      pool.execute(
                          () -> {
                            runs.incrementAndGet(id);
                            ran.incrementAndGet();
                          });
                      accepted.incrementAndGet();
                    } catch (RejectedExecutionException e) {
                      mine.add(id); // all 16 busy: the caller is told, the task never runs
                    }
                  }
                  return mine;
                }));
      }
      for (Future<List<Integer>> f : done) {
        rejected.addAll(f.get(60, TimeUnit.SECONDS));
      }
    } finally {
      threads.shutdownNow();
    }
    awaitTrue(() -> ran.get() == accepted.get());
    Thread.sleep(20); // a second run, if there were one, would show now
    assertThat(ran.get()).isEqualTo(accepted.get());
    assertThat(accepted.get() + rejected.size()).isEqualTo(submitters * perSubmitter);
    for (int id : rejected) {
      assertThat(runs.get(id)).as("rejected task %d", id).isZero();
    }
    int once = 0;
    for (int i = 0; i < runs.length(); i++) {
      assertThat(runs.get(i)).as("task %d", i).isLessThanOrEqualTo(1);
      once += runs.get(i);
    }
    assertThat(once).isEqualTo(accepted.get());
    assertThat(pool.threads()).isLessThanOrEqualTo(16);
    pool.shutdown();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void aPoolNeedsAThread() {
    assertThatThrownBy(() -> new HandlerPool("x-", 0, MINUTE))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxThreads must be at least 1: 0");
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void awaitTrue(BooleanSupplier condition) throws InterruptedException {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!condition.getAsBoolean() && System.nanoTime() < until) {
      Thread.sleep(5);
    }
  }
}
