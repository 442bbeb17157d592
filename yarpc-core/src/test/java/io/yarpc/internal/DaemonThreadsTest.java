package io.yarpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class DaemonThreadsTest {
  @Test
  void threadsAreNamedDaemons() throws Exception {
    ExecutorService pool = DaemonThreads.cachedPool("test-pool-", 4);
    try {
      CompletableFuture<Thread> first = new CompletableFuture<>();
      pool.execute(() -> first.complete(Thread.currentThread()));
      Thread t = first.get(10, TimeUnit.SECONDS);
      assertThat(t.getName()).isEqualTo("test-pool-1");
      assertThat(t.isDaemon()).isTrue();
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aTaskOverTheLimitIsRejected() throws Exception {
    ExecutorService pool = DaemonThreads.cachedPool("test-full-", 1);
    CountDownLatch release = new CountDownLatch(1);
    try {
      pool.execute(
          () -> {
            try {
              release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          });
      assertThatThrownBy(() -> pool.execute(() -> {}))
          .isInstanceOf(RejectedExecutionException.class);
    } finally {
      release.countDown();
      pool.shutdownNow();
    }
  }
}
