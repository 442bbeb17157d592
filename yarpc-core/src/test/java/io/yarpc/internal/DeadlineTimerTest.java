package io.yarpc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * The lock-free timer under concurrency, each test on a timer of its own (the shared one serves the
 * other tests meanwhile): schedulers push, cancellers compare-and-set, the timer thread alone orders.
 */
class DeadlineTimerTest {
  private static final int THREADS = 4;

  /** What one task saw: how often it ran, and whether its cancel had returned true before. */
  private static final class Probe {
    final AtomicInteger runs = new AtomicInteger();
    volatile boolean cancelReturnedTrue;
    volatile boolean ranAfterCancel;

    void run() {
      if (cancelReturnedTrue) {
        ranAfterCancel = true;
      }
      runs.incrementAndGet();
    }
  }

  @Test
  void underManySchedulersAndCancellersEveryKeptTaskRunsExactlyOnceAndNoCancelledOneRuns()
      throws Exception {
    DeadlineTimer timer = new DeadlineTimer("test-timer-exactly-once");
    int perThread = 20_000;
    List<List<Probe>> kept = new ArrayList<>();
    List<List<Probe>> cancelled = new ArrayList<>();
    CyclicBarrier start = new CyclicBarrier(THREADS);
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        List<Probe> mineKept = new ArrayList<>();
        List<Probe> mineCancelled = new ArrayList<>();
        kept.add(mineKept);
        cancelled.add(mineCancelled);
        done.add(
            pool.submit(
                () -> {
                  start.await();
                  ThreadLocalRandom random = ThreadLocalRandom.current();
                  for (int i = 0; i < perThread; i++) {
                    Probe probe = new Probe();
                    // from already due to 20 ms: some cancels race the run, most win
                    long delay = TimeUnit.MICROSECONDS.toNanos(random.nextInt(-1_000, 20_000));
                    DeadlineTimer.Task task = timer.schedule(Probe::run, probe, delay);
                    if (random.nextBoolean()) {
                      mineKept.add(probe);
                    } else if (task.cancel(false)) {
                      probe.cancelReturnedTrue = true;
                      mineCancelled.add(probe);
                      assertThat(task.isCancelled()).isTrue();
                    } else {
                      mineKept.add(probe); // it had started: it runs (or ran) once
                      assertThat(task.isCancelled()).isFalse();
                      assertThat(task.isDone()).isTrue();
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> f : done) {
        f.get(60, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    List<Probe> allKept = new ArrayList<>();
    kept.forEach(allKept::addAll);
    List<Probe> allCancelled = new ArrayList<>();
    cancelled.forEach(allCancelled::addAll);
    assertThat(allKept.size() + allCancelled.size()).isEqualTo(THREADS * perThread);
    assertThat(allCancelled).as("some cancels won").isNotEmpty();

    awaitTrue(() -> allKept.stream().allMatch(p -> p.runs.get() >= 1));
    Thread.sleep(50); // a second run, if there were one, would show now
    assertThat(allKept).allSatisfy(p -> assertThat(p.runs).as("runs of a kept task").hasValue(1));
    assertThat(allCancelled)
        .allSatisfy(
            p -> {
              assertThat(p.runs).as("runs of a cancelled task").hasValue(0);
              assertThat(p.ranAfterCancel).isFalse();
            });
    awaitTrue(() -> timer.queued() == 0);
    assertThat(timer.queued()).as("every task run or dropped").isZero();
  }

  @Test
  void cancelledTasksFromManyThreadsArePurgedAndKeepTheQueueBounded() throws Exception {
    DeadlineTimer timer = new DeadlineTimer("test-timer-bounded");
    int perThread = DeadlineTimer.MIN_PURGE * 20;
    CyclicBarrier start = new CyclicBarrier(THREADS);
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    List<DeadlineTimer.Task> live = new ArrayList<>();
    try {
      List<Future<List<DeadlineTimer.Task>>> done = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        done.add(
            pool.submit(
                () -> {
                  start.await();
                  List<DeadlineTimer.Task> mine = new ArrayList<>();
                  for (int i = 0; i < perThread; i++) {
                    DeadlineTimer.Task task =
                        timer.schedule(() -> {}, TimeUnit.HOURS.toNanos(1) + i);
                    if (i % 100 == 0) {
                      mine.add(task); // one in a hundred stays scheduled
                    } else {
                      assertThat(task.cancel(false)).isTrue();
                    }
                  }
                  return mine;
                }));
      }
      for (Future<List<DeadlineTimer.Task>> f : done) {
        live.addAll(f.get(60, TimeUnit.SECONDS));
      }
    } finally {
      pool.shutdownNow();
    }
    int bound = 2 * Math.max(DeadlineTimer.MIN_PURGE, live.size());
    // queued() is approximate while the timer thread moves tasks from its inbox into its heap (a
    // read in the middle of that saw 815 with 820 live): wait for a read that is within the bounds
    awaitTrue(
        () -> {
          int held = timer.queued();
          return held >= live.size() && held <= bound;
        });
    assertThat(timer.queued())
        .as("held tasks, %d of them live", live.size())
        .isBetween(live.size(), bound);

    live.forEach(task -> assertThat(task.cancel(false)).isTrue());
    awaitTrue(() -> timer.queued() <= DeadlineTimer.MIN_PURGE);
    assertThat(timer.queued()).isLessThanOrEqualTo(DeadlineTimer.MIN_PURGE);
  }

  @Test
  void laterDeadlinesWakeNobody() throws Exception {
    DeadlineTimer timer = new DeadlineTimer("test-timer-no-wake-up");
    DeadlineTimer.Task first = timer.schedule(() -> {}, TimeUnit.HOURS.toNanos(1));
    awaitTrue(() -> timer.queued() == 1 && timer.passes() >= 1);
    Thread.sleep(20); // the timer thread sleeps until the first task
    long passesBefore = timer.passes();
    int calls = DeadlineTimer.MIN_PURGE * 10;
    for (int i = 0; i < calls; i++) {
      // one call after the other, each with a later deadline, cancelled when it ends
      timer.schedule(() -> {}, TimeUnit.HOURS.toNanos(2)).cancel(false);
    }
    long wakeUps = timer.passes() - passesBefore;
    // A purge is asked for about once per MIN_PURGE cancels; cancels that land during a purge may
    // ask again (how many depends on the two threads' timing: 40 and 241 seen in CI runs, the
    // second right after a test class that kept both cores busy), so the bound is loose: what
    // matters is far fewer wake-ups than calls.
    assertThat(wakeUps)
        .as("woken to purge, not per call: %d calls", calls)
        .isLessThanOrEqualTo(calls / 16L);
    assertThat(first.cancel(false)).isTrue();
  }

  @Test
  void anEarlierTaskWakesTheSleepingTimerAndTasksRunInDeadlineOrder() throws Exception {
    DeadlineTimer timer = new DeadlineTimer("test-timer-order");
    List<Integer> order = java.util.Collections.synchronizedList(new ArrayList<>());
    CountDownLatch ran = new CountDownLatch(3);
    DeadlineTimer.Task late = timer.schedule(() -> {}, TimeUnit.HOURS.toNanos(1));
    awaitTrue(() -> timer.passes() >= 1);
    Thread.sleep(20); // asleep until the late task
    for (int i : new int[] {3, 1, 2}) {
      timer.schedule(
          () -> {
            order.add(i);
            ran.countDown();
          },
          // 300 ms apart: a scheduling thread stalled by a loaded machine does not reorder them
          TimeUnit.MILLISECONDS.toNanos(300L * i));
    }
    assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(order).containsExactly(1, 2, 3);
    assertThat(late.isDone()).isFalse();
    late.cancel(false);
  }

  @Test
  void aTaskCancelledAfterItRanReportsSo() throws Exception {
    DeadlineTimer timer = new DeadlineTimer("test-timer-after-run");
    Probe probe = new Probe();
    DeadlineTimer.Task task = timer.schedule(Probe::run, probe, 0);
    awaitTrue(() -> probe.runs.get() == 1);
    assertThat(task.isDone()).isTrue();
    assertThat(task.cancel(false)).as("too late").isFalse();
    assertThat(task.isCancelled()).isFalse();
  }

  private static void awaitTrue(BooleanSupplier condition) throws InterruptedException {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!condition.getAsBoolean() && System.nanoTime() < until) {
      Thread.sleep(5);
    }
  }
}
