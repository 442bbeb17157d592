package io.yarpc.benchmarks.load;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * Warms a cell up until its rate is stable: counts completed calls in consecutive {@value #WINDOW_MILLIS}
 * ms windows and stops once the minimum time has passed and the last {@value #WINDOWS} windows' calls/s
 * are each within {@value #TOLERANCE_PERCENT} % of their mean, or when the maximum time is up (then the
 * cell is reported as not stable). Meanwhile it runs the harness's stack sampler every few milliseconds.
 */
final class WarmUp {
  static final long WINDOW_MILLIS = 1000;
  static final int WINDOWS = 3;
  static final int TOLERANCE_PERCENT = 5;
  private static final long SAMPLE_EVERY_MILLIS = 3;

  /** How a warm-up ended: how long it took and whether the rate settled. */
  record Result(double seconds, boolean stable) {}

  private final Runnable sampler;

  /** Warm-ups that run {@code sampler} every few milliseconds. */
  WarmUp(Runnable sampler) {
    this.sampler = sampler;
  }

  /**
   * Warms up for at least {@code min} and at most {@code max} (or {@code min} if that is longer), until
   * the rate of {@code completed} (a counter of calls or messages) is stable.
   */
  Result run(Duration min, Duration max, LongSupplier completed) throws InterruptedException {
    long start = System.nanoTime();
    long minEnd = start + min.toNanos();
    long maxEnd = start + Math.max(min.toNanos(), max.toNanos());
    List<Double> rates = new ArrayList<>();
    long windowStart = start;
    long windowCalls = completed.getAsLong();
    while (true) {
      sampler.run();
      Thread.sleep(SAMPLE_EVERY_MILLIS);
      long now = System.nanoTime();
      if (now - windowStart >= WINDOW_MILLIS * 1_000_000) {
        long calls = completed.getAsLong();
        rates.add((calls - windowCalls) * 1e9 / (now - windowStart));
        windowStart = now;
        windowCalls = calls;
      }
      if (now >= minEnd && stable(rates)) {
        return new Result((now - start) / 1e9, true);
      }
      if (now >= maxEnd) {
        return new Result((now - start) / 1e9, false);
      }
    }
  }

  /** Runs the sampler for {@code time}, counting nothing. */
  void sample(Duration time) throws InterruptedException {
    long end = System.nanoTime() + time.toNanos();
    while (System.nanoTime() < end) {
      sampler.run();
      Thread.sleep(SAMPLE_EVERY_MILLIS);
    }
  }

  /**
   * Whether the last {@value #WINDOWS} rates are each within {@value #TOLERANCE_PERCENT} % of their mean
   * (and the mean is above zero: a stalled cell is not stable).
   */
  static boolean stable(List<Double> rates) {
    if (rates.size() < WINDOWS) {
      return false;
    }
    List<Double> last = rates.subList(rates.size() - WINDOWS, rates.size());
    double mean = last.stream().mapToDouble(Double::doubleValue).average().orElse(0);
    if (mean <= 0) {
      return false;
    }
    for (double r : last) {
      if (Math.abs(r - mean) > mean * TOLERANCE_PERCENT / 100.0) {
        return false;
      }
    }
    return true;
  }
}
