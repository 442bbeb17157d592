package io.yarpc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class GoDurationsTest {
  @Test
  void formatsLikeGo() {
    assertThat(GoDurations.format(Duration.ZERO)).isEqualTo("0s");
    assertThat(GoDurations.format(Duration.ofNanos(15))).isEqualTo("15ns");
    assertThat(GoDurations.format(Duration.ofNanos(1_500))).isEqualTo("1.5µs");
    assertThat(GoDurations.format(Duration.ofMillis(100))).isEqualTo("100ms");
    assertThat(GoDurations.format(Duration.ofMillis(1500))).isEqualTo("1.5s");
    assertThat(GoDurations.format(Duration.ofSeconds(2))).isEqualTo("2s");
    assertThat(GoDurations.format(Duration.ofSeconds(123))).isEqualTo("2m3s");
    assertThat(GoDurations.format(Duration.ofSeconds(3600))).isEqualTo("1h0m0s");
    assertThat(GoDurations.format(Duration.ofMillis(-5))).isEqualTo("-5ms");
  }
}
