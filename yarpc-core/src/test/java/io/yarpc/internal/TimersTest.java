package io.yarpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
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
  void anEndlessDelayNeverRunsEarly() throws Exception {
    AtomicInteger runs = new AtomicInteger();
    ScheduledFuture<?> never = Timers.schedule(runs::incrementAndGet, Long.MAX_VALUE);
    CountDownLatch later = new CountDownLatch(1);
    Timers.schedule(later::countDown, TimeUnit.MILLISECONDS.toNanos(50));
    assertThat(later.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(runs).hasValue(0);
    assertThat(never.getDelay(TimeUnit.DAYS)).isGreaterThan(365L * 50);
    never.cancel(false);
  }

  @Test
  void cancelledTasksNeverRun() throws Exception {
    long delay = TimeUnit.MILLISECONDS.toNanos(50);
    AtomicInteger runs = null;
    // a loaded machine may pause this thread past the delay before it cancels: then the task
    // ran, as it should have, and the check starts again with a new task
    for (int attempt = 0; attempt < 20 && runs == null; attempt++) {
      AtomicInteger counter = new AtomicInteger();
      long scheduled = System.nanoTime();
      if (Timers.schedule(counter::incrementAndGet, delay).cancel(false)) {
        runs = counter;
      } else {
        assertThat(System.nanoTime() - scheduled).isGreaterThanOrEqualTo(delay);
      }
    }
    assertThat(runs).as("a cancel before the deadline, in 20 attempts").isNotNull();
    CountDownLatch later = new CountDownLatch(1);
    Timers.schedule(later::countDown, 3 * delay);
    assertThat(later.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(runs).hasValue(0);
  }

  @Test
  void cancelledTasksArePurgedRatherThanKeptUntilTheirDeadline() throws Exception {
    int count = DeadlineTimer.MIN_PURGE * 5;
    for (int i = 0; i < count; i++) {
      Timers.schedule(() -> {}, TimeUnit.HOURS.toNanos(1)).cancel(false);
    }
    // the cancellers wake the timer thread, which purges
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (Timers.queued() > 2 * DeadlineTimer.MIN_PURGE && System.nanoTime() < until) {
      Thread.onSpinWait();
    }
    assertThat(Timers.queued())
        .as("purged once cancelled tasks were half of those held")
        .isLessThanOrEqualTo(2 * DeadlineTimer.MIN_PURGE);
  }

  @Test
  void aCancelledTaskLetsGoOfItsActionAtOnce() throws Exception {
    AtomicReference<WeakReference<byte[]>> ref = new AtomicReference<>();
    ScheduledFuture<?> f = scheduleHolding(ref);
    collectGarbage(ref.get());
    assertThat(ref.get().get()).as("the scheduled task keeps what its action captured").isNotNull();

    assertThat(f.cancel(false)).isTrue();
    assertThat(f.isCancelled()).isTrue();
    assertThat(f.isDone()).isTrue();
    assertThat(f.cancel(false)).as("once").isFalse();
    collectGarbage(ref.get());
    assertThat(ref.get().get()).as("dropped on cancel, though the task is still queued").isNull();
  }

  /** Schedules a task whose action alone holds a 1 MiB array; {@code ref} sees the array. */
  private static ScheduledFuture<?> scheduleHolding(AtomicReference<WeakReference<byte[]>> ref) {
    byte[] big = new byte[1 << 20];
    ref.set(new WeakReference<>(big));
    return Timers.schedule(() -> big[0]++, TimeUnit.HOURS.toNanos(1));
  }

  private static void collectGarbage(WeakReference<?> until) throws InterruptedException {
    for (int i = 0; i < 20 && until.get() != null; i++) {
      System.gc();
      Thread.sleep(10);
    }
  }

  @Test
  void pendingTasksSurviveAPurgeAndRunInDeadlineOrder() throws Exception {
    List<Integer> order = java.util.Collections.synchronizedList(new ArrayList<>());
    CountDownLatch ran = new CountDownLatch(3);
    Timers.schedule(
        () -> {
          order.add(3);
          ran.countDown();
        },
        TimeUnit.MILLISECONDS.toNanos(300));
    Timers.schedule(
        () -> {
          order.add(1);
          ran.countDown();
        },
        TimeUnit.MILLISECONDS.toNanos(100));
    List<ScheduledFuture<?>> others = new ArrayList<>();
    for (int i = 0; i < DeadlineTimer.MIN_PURGE * 3; i++) {
      others.add(Timers.schedule(() -> {}, TimeUnit.HOURS.toNanos(1)));
    }
    others.forEach(f -> f.cancel(false));
    Timers.schedule(
        () -> {
          order.add(2);
          ran.countDown();
        },
        TimeUnit.MILLISECONDS.toNanos(200));
    assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(order).containsExactly(1, 2, 3);
  }

  @Test
  void anEarlierTaskWakesTheTimerSleepingUntilALaterOne() throws Exception {
    ScheduledFuture<?> late = Timers.schedule(() -> {}, TimeUnit.HOURS.toNanos(1));
    Thread.sleep(50); // the timer thread now sleeps until the late task
    CountDownLatch ran = new CountDownLatch(1);
    Timers.schedule(ran::countDown, TimeUnit.MILLISECONDS.toNanos(10));
    assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    late.cancel(false);
  }

  @Test
  void aFailingTaskDoesNotStopTheTimer() throws Exception {
    Timers.schedule(
        () -> {
          throw new IllegalStateException("deliberate");
        },
        0);
    CountDownLatch ran = new CountDownLatch(1);
    Timers.schedule(ran::countDown, TimeUnit.MILLISECONDS.toNanos(5));
    assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void theSharedSchedulerRunsOneShotTasksOnly() throws Exception {
    CountDownLatch ran = new CountDownLatch(2);
    Timers.scheduler().schedule(ran::countDown, 5, TimeUnit.MILLISECONDS);
    Timers.scheduler().execute(ran::countDown);
    assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    assertThatThrownBy(() -> Timers.scheduler().shutdown())
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> Timers.scheduler().shutdownNow())
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(
            () -> Timers.scheduler().scheduleAtFixedRate(() -> {}, 1, 1, TimeUnit.SECONDS))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThat(Timers.scheduler().isShutdown()).isFalse();
  }

  @Test
  void underConcurrentScheduleAndCancelEveryKeptTaskRunsOnceAndNoCancelledOneRuns()
      throws Exception {
    int threads = 4;
    int perThread = 5_000;
    AtomicInteger ranKept = new AtomicInteger();
    AtomicInteger ranCancelled = new AtomicInteger();
    AtomicInteger kept = new AtomicInteger();
    AtomicInteger lostRaces = new AtomicInteger();
    java.util.concurrent.ExecutorService pool =
        java.util.concurrent.Executors.newFixedThreadPool(threads);
    try {
      List<java.util.concurrent.Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        long seed = t;
        done.add(
            pool.submit(
                () -> {
                  java.util.Random random = new java.util.Random(seed);
                  for (int i = 0; i < perThread; i++) {
                    long delay = TimeUnit.MICROSECONDS.toNanos(random.nextInt(20_000));
                    if (random.nextBoolean()) {
                      kept.incrementAndGet();
                      Timers.schedule(ranKept::incrementAndGet, delay);
                    } else {
                      AtomicBoolean cancelled = new AtomicBoolean();
                      ScheduledFuture<?> f =
                          Timers.schedule(
                              () -> {
                                if (cancelled.get()) {
                                  ranCancelled.incrementAndGet();
                                }
                              },
                              delay);
                      if (f.cancel(false)) {
                        cancelled.set(true);
                      } else {
                        lostRaces.incrementAndGet(); // it ran before the cancel: counts as kept
                        kept.incrementAndGet();
                        ranKept.incrementAndGet();
                      }
                    }
                  }
                  return null;
                }));
      }
      for (java.util.concurrent.Future<?> f : done) {
        f.get(30, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (ranKept.get() < kept.get() && System.nanoTime() < until) {
      Thread.sleep(10);
    }
    Thread.sleep(50);
    assertThat(ranKept.get())
        .as("kept tasks ran, each once (%d lost the race to cancel)", lostRaces.get())
        .isEqualTo(kept.get());
    assertThat(ranCancelled).as("cancelled tasks never ran").hasValue(0);
  }
}
