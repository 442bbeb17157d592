package io.yarpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class TimersTest {
  @Test
  void runsTasksWhenDue() throws Exception {
    CountDownLatch ran = new CountDownLatch(2);
    Timers.schedule(ran::countDown, TimeUnit.MILLISECONDS.toNanos(5));
    Timers.schedule(ran::countDown, -1); // at once
    assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void cancelledTasksNeverRun() throws Exception {
    AtomicInteger runs = new AtomicInteger();
    ScheduledFuture<?> cancelled = Timers.schedule(runs::incrementAndGet, TimeUnit.MILLISECONDS.toNanos(20));
    assertThat(cancelled.cancel(false)).isTrue();
    CountDownLatch later = new CountDownLatch(1);
    Timers.schedule(later::countDown, TimeUnit.MILLISECONDS.toNanos(60));
    assertThat(later.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(runs).hasValue(0);
  }

  @Test
  void cancelledTasksArePurgedRatherThanKeptUntilTheirDeadline() throws Exception {
    int count = Timers.PURGE_EVERY * 3;
    for (int i = 0; i < count; i++) {
      Timers.schedule(() -> { }, TimeUnit.HOURS.toNanos(1)).cancel(false);
    }
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (Timers.queued() >= Timers.PURGE_EVERY && System.nanoTime() < until) {
      Thread.sleep(5);
    }
    assertThat(Timers.queued()).isLessThan(Timers.PURGE_EVERY);
  }

  @Test
  void pendingTasksSurviveAPurge() throws Exception {
    CountDownLatch ran = new CountDownLatch(1);
    Timers.schedule(ran::countDown, TimeUnit.MILLISECONDS.toNanos(200));
    List<ScheduledFuture<?>> others = new ArrayList<>();
    for (int i = 0; i < Timers.PURGE_EVERY + 1; i++) {
      others.add(Timers.schedule(() -> { }, TimeUnit.HOURS.toNanos(1)));
    }
    others.forEach(f -> f.cancel(false));
    assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void theSharedSchedulerCannotBeShutDown() {
    assertThatThrownBy(() -> Timers.scheduler().shutdown()).isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> Timers.scheduler().shutdownNow())
        .isInstanceOf(UnsupportedOperationException.class);
    assertThat(Timers.scheduler().isShutdown()).isFalse();
  }
}
