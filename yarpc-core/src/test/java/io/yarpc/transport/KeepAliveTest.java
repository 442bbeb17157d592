package io.yarpc.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class KeepAliveTest {
  @Test
  void defaultsAreTheDocumentedOnes() {
    KeepAlive k = KeepAlive.builder().build();
    assertThat(k.time()).isEqualTo(Duration.ofSeconds(10)).isEqualTo(KeepAlive.DEFAULT_TIME);
    assertThat(k.timeout()).isEqualTo(Duration.ofSeconds(20)).isEqualTo(KeepAlive.DEFAULT_TIMEOUT);
    assertThat(k.withoutCalls()).isFalse();
  }

  @Test
  void everySetsOnlyTheTime() {
    KeepAlive k = KeepAlive.every(Duration.ofSeconds(30));
    assertThat(k.time()).isEqualTo(Duration.ofSeconds(30));
    assertThat(k.timeout()).isEqualTo(KeepAlive.DEFAULT_TIMEOUT);
    assertThat(k.withoutCalls()).isFalse();
  }

  @Test
  void toBuilderKeepsEverySettingAndEqualityFollowsThem() {
    KeepAlive k =
        KeepAlive.builder()
            .time(Duration.ofMillis(200))
            .timeout(Duration.ofMillis(500))
            .withoutCalls(true)
            .build();
    assertThat(k.toBuilder().build()).isEqualTo(k).hasSameHashCodeAs(k);
    assertThat(k.toBuilder().withoutCalls(false).build()).isNotEqualTo(k);
    assertThat(k.toBuilder().timeout(Duration.ofSeconds(1)).build()).isNotEqualTo(k);
    assertThat(k.toBuilder().time(Duration.ofSeconds(1)).build()).isNotEqualTo(k);
    assertThat(k).hasToString("KeepAlive{time=PT0.2S, timeout=PT0.5S, withoutCalls=true}");
  }

  @Test
  void nonsenseIsRefusedWhenSet() {
    assertThatThrownBy(() -> KeepAlive.every(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("time must be positive: PT0S");
    assertThatThrownBy(() -> KeepAlive.builder().timeout(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("timeout must be positive: PT-0.001S");
    assertThatThrownBy(() -> KeepAlive.every(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("time");
  }
}
