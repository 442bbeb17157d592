package io.yarpc.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class BackoffTest {
  private static final long MS = 1_000_000L;

  @Test
  void capsDoubleFromFirstUpToMax() {
    Backoff b = Backoff.exponential(Duration.ofMillis(10), Duration.ofMillis(100));
    assertThat(b.capNanos(0)).isEqualTo(10 * MS);
    assertThat(b.capNanos(1)).isEqualTo(20 * MS);
    assertThat(b.capNanos(3)).isEqualTo(80 * MS);
    assertThat(b.capNanos(4)).isEqualTo(100 * MS);
    assertThat(b.capNanos(1000)).as("no overflow").isEqualTo(100 * MS);
    assertThat(b.capNanos(Integer.MAX_VALUE)).isEqualTo(100 * MS);
  }

  @Test
  void delaysAreFullJitterWithinTheCap() {
    Backoff b = Backoff.exponential(Duration.ofMillis(10), Duration.ofMillis(100));
    long min = Long.MAX_VALUE;
    long max = 0;
    for (int i = 0; i < 2000; i++) {
      long d = b.delayNanos(2);
      min = Math.min(min, d);
      max = Math.max(max, d);
    }
    assertThat(min)
        .isGreaterThanOrEqualTo(0)
        .isLessThan(10 * MS); // from zero, not from half the cap
    assertThat(max).isLessThanOrEqualTo(40 * MS).isGreaterThan(30 * MS);
  }

  @Test
  void defaultsAreYarpcGos() {
    Backoff b = Backoff.builder().build();
    assertThat(b.first()).isEqualTo(Duration.ofMillis(10));
    assertThat(b.max()).isEqualTo(Duration.ofMinutes(1));
    assertThat(b.toString()).contains("full jitter");
  }

  @Test
  void badSettingsAreRefused() {
    assertThatThrownBy(() -> Backoff.exponential(Duration.ZERO, Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("first must be positive: PT0S");
    assertThatThrownBy(() -> Backoff.builder().max(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("max must be positive: PT-0.001S");
    assertThatThrownBy(() -> Backoff.exponential(Duration.ofSeconds(2), Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("first must not be longer than max: first PT2S, max PT1S");
    assertThatThrownBy(() -> Backoff.builder().first(null))
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> Backoff.builder().build().delayNanos(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("attempt must not be negative: -1");
  }
}
