package io.yarpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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

  @Test
  void parsesLikeGo() {
    assertThat(GoDurations.parse("0")).isEqualTo(Duration.ZERO);
    assertThat(GoDurations.parse("500ms")).isEqualTo(Duration.ofMillis(500));
    assertThat(GoDurations.parse("1m30s")).isEqualTo(Duration.ofSeconds(90));
    assertThat(GoDurations.parse("1.5h")).isEqualTo(Duration.ofMinutes(90));
    assertThat(GoDurations.parse("2h45m")).isEqualTo(Duration.ofMinutes(165));
    assertThat(GoDurations.parse("10us")).isEqualTo(Duration.ofNanos(10_000));
    assertThat(GoDurations.parse("10\u00b5s")).isEqualTo(Duration.ofNanos(10_000));
    assertThat(GoDurations.parse("7ns")).isEqualTo(Duration.ofNanos(7));
    assertThat(GoDurations.parse(".5s")).isEqualTo(Duration.ofMillis(500));
    assertThat(GoDurations.parse("-1.5s")).isEqualTo(Duration.ofMillis(-1500));
    assertThat(GoDurations.parse("+3s")).isEqualTo(Duration.ofSeconds(3));
    for (Duration d :
        new Duration[] {Duration.ofMillis(100), Duration.ofSeconds(123), Duration.ofMillis(1500)}) {
      assertThat(GoDurations.parse(GoDurations.format(d))).isEqualTo(d);
    }
  }

  @Test
  void refusesWhatGoRefuses() {
    assertThatThrownBy(() -> GoDurations.parse("5")).hasMessage("missing unit in duration \"5\"");
    assertThatThrownBy(() -> GoDurations.parse("1m30"))
        .hasMessage("missing unit in duration \"1m30\"");
    assertThatThrownBy(() -> GoDurations.parse("2d"))
        .hasMessage("unknown unit \"d\" in duration \"2d\"");
    assertThatThrownBy(() -> GoDurations.parse("")).hasMessage("invalid duration \"\"");
    assertThatThrownBy(() -> GoDurations.parse("-")).hasMessage("invalid duration \"-\"");
    assertThatThrownBy(() -> GoDurations.parse("ms")).hasMessage("invalid duration \"ms\"");
    assertThatThrownBy(() -> GoDurations.parse("1..5s")).hasMessage("invalid duration \"1..5s\"");
    assertThatThrownBy(() -> GoDurations.parse("3000000h"))
        .hasMessage("invalid duration \"3000000h\": too long");
  }
}
