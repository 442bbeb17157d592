package io.yarpc.benchmarks.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** When the warm-up calls a rate stable; nothing here depends on how fast anything runs. */
class WarmUpTest {
  @Test
  void stableOnceTheLastThreeWindowsAreWithinFivePercentOfTheirMean() {
    assertThat(WarmUp.stable(List.of())).isFalse();
    assertThat(WarmUp.stable(List.of(1000.0, 1000.0))).isFalse(); // fewer than three windows
    assertThat(WarmUp.stable(List.of(1000.0, 1000.0, 1000.0))).isTrue();
    // mean 1000: 960 and 1040 are 4 % off
    assertThat(WarmUp.stable(List.of(960.0, 1000.0, 1040.0))).isTrue();
    // mean 1000: 940 and 1060 are 6 % off
    assertThat(WarmUp.stable(List.of(940.0, 1000.0, 1060.0))).isFalse();
    // only the last three count: a slow first window (JIT) does not keep it unstable
    assertThat(WarmUp.stable(List.of(200.0, 600.0, 990.0, 1000.0, 1010.0))).isTrue();
    assertThat(WarmUp.stable(List.of(990.0, 1000.0, 1010.0, 600.0))).isFalse();
    // a stalled cell is not stable
    assertThat(WarmUp.stable(List.of(0.0, 0.0, 0.0))).isFalse();
  }

  @Test
  void anUnsettledRateEndsAtTheMaximumAndSaysSo() throws Exception {
    AtomicInteger samples = new AtomicInteger();
    // a counter that never moves: never stable
    WarmUp.Result r =
        new WarmUp(samples::incrementAndGet).run(Duration.ZERO, Duration.ofMillis(50), () -> 0);
    assertThat(r.stable()).isFalse();
    assertThat(r.seconds()).isGreaterThanOrEqualTo(0.05);
    assertThat(samples.get()).isPositive(); // the stack sampler ran meanwhile
  }
}
