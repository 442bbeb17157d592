package io.yarpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ElasticPoolTest {
  private static final long WAIT_SECONDS = 10;

  private static ElasticPool pool(String prefix, int base, int max) {
    AtomicInteger n = new AtomicInteger();
    return new ElasticPool(
        base,
        max,
        r -> {
          Thread t = new Thread(r, prefix + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        },
        r -> {
          Thread t = new Thread(r, prefix + "watch");
          t.setDaemon(true);
          return t;
        });
  }

  private static Runnable blockUntil(CountDownLatch started, CountDownLatch release) {
    return () -> {
      started.countDown();
      try {
        release.await(WAIT_SECONDS, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    };
  }

  @Test
  void quickTasksRunFromTheQueue() throws Exception {
    ElasticPool pool = pool("elastic-quick-", 2, 64);
    try {
      AtomicInteger ran = new AtomicInteger();
      for (int wave = 0; wave < 200; wave++) { // 50 at a time: within the queue's 64
        CountDownLatch done = new CountDownLatch(50);
        for (int i = 0; i < 50; i++) {
          pool.execute(
              () -> {
                ran.incrementAndGet();
                done.countDown();
              });
        }
        assertThat(done.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
      }
      assertThat(ran.get()).isEqualTo(10_000);
      awaitBase(pool);
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void tasksQueuedBehindBlockedThreadsGetThreadsOfTheirOwn() throws Exception {
    ElasticPool pool = pool("elastic-blocked-", 2, 64);
    CountDownLatch release = new CountDownLatch(1);
    try {
      int tasks = 10; // five times the base: eight of them queue behind the first two
      CountDownLatch started = new CountDownLatch(tasks);
      for (int i = 0; i < tasks; i++) {
        pool.execute(blockUntil(started, release));
      }
      assertThat(started.await(WAIT_SECONDS, TimeUnit.SECONDS))
          .as("every blocked task started while the others still blocked")
          .isTrue();
      assertThat(pool.getPoolSize()).isGreaterThanOrEqualTo(tasks);
      release.countDown();
      awaitBase(pool);
      CountDownLatch after = new CountDownLatch(1);
      pool.execute(after::countDown);
      assertThat(after.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
    } finally {
      release.countDown();
      pool.shutdownNow();
    }
  }

  @Test
  void aTaskBeyondTheBusyThreadsAndTheFullQueueIsRejected() throws Exception {
    ElasticPool pool = pool("elastic-full-", 1, 2);
    CountDownLatch release = new CountDownLatch(1);
    try {
      CountDownLatch started = new CountDownLatch(4);
      for (int i = 0; i < 4; i++) { // two threads busy, two tasks queued
        pool.execute(blockUntil(started, release));
      }
      assertThat(pool.getPoolSize()).isEqualTo(2);
      assertThat(pool.getQueue()).hasSize(2);
      assertThatThrownBy(() -> pool.execute(() -> {}))
          .isInstanceOf(RejectedExecutionException.class);
      release.countDown();
      assertThat(started.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
    } finally {
      release.countDown();
      pool.shutdownNow();
    }
  }

  @Test
  void theWatcherEndsWithThePool() throws Exception {
    ElasticPool pool = pool("elastic-end-", 2, 8);
    CountDownLatch ran = new CountDownLatch(1);
    pool.execute(ran::countDown);
    assertThat(ran.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
    Thread watcher = thread("elastic-end-watch");
    assertThat(watcher).isNotNull();
    pool.shutdown();
    assertThat(pool.awaitTermination(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
    watcher.join(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
    assertThat(watcher.isAlive()).isFalse();
  }

  @Test
  void theDaemonThreadsFactoryMakesNamedDaemonsAndAWatcher() throws Exception {
    ExecutorService pool = DaemonThreads.elasticPool("elastic-named-", 16);
    try {
      CountDownLatch ran = new CountDownLatch(1);
      Thread[] seen = new Thread[1];
      pool.execute(
          () -> {
            seen[0] = Thread.currentThread();
            ran.countDown();
          });
      assertThat(ran.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
      assertThat(seen[0].getName()).isEqualTo("elastic-named-1");
      assertThat(seen[0].isDaemon()).isTrue();
      assertThat(thread("elastic-named-watch").isDaemon()).isTrue();
    } finally {
      pool.shutdownNow();
    }
  }

  /** Waits until the pool is back to its base size, as it goes once nothing had to wait for a while. */
  private static void awaitBase(ElasticPool pool) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
    while (pool.getCorePoolSize() != pool.base() && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertThat(pool.getCorePoolSize()).isEqualTo(pool.base());
  }

  private static Thread thread(String name) {
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().equals(name)) {
        return t;
      }
    }
    return null;
  }
}
