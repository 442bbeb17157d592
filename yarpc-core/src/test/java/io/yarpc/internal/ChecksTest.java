package io.yarpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class ChecksTest {
  @Test
  void positiveDurationsPassZeroNegativeAndNullDoNot() {
    assertThat(Checks.positive(Duration.ofNanos(1), "timeout")).isEqualTo(Duration.ofNanos(1));
    assertThatThrownBy(() -> Checks.positive(Duration.ZERO, "timeout"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("timeout must be positive: PT0S");
    assertThatThrownBy(() -> Checks.positive(Duration.ofSeconds(-1), "idle"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("idle must be positive: PT-1S");
    assertThatThrownBy(() -> Checks.positive(null, "timeout"))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("timeout");
  }
}
