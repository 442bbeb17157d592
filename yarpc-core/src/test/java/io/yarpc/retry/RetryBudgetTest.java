package io.yarpc.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class RetryBudgetTest {
  private final AtomicLong now = new AtomicLong(1_000_000_000_000L);

  private RetryBudget budget(double percent, int minPerSecond) {
    return RetryBudget.builder()
        .percentCanRetry(percent)
        .minRetriesPerSecond(minPerSecond)
        .ttl(Duration.ofSeconds(10))
        .clock(now::get)
        .build();
  }

  @Test
  void aFractionOfTheCallsMayBeRetried() {
    RetryBudget b = budget(0.1, 0);
    assertThat(b.tryWithdraw()).as("no calls yet, no reserve").isFalse();
    for (int i = 0; i < 100; i++) {
      b.deposit();
    }
    int retries = 0;
    while (b.tryWithdraw()) {
      retries++;
    }
    assertThat(retries).isEqualTo(10);
    assertThat(b.balance()).isZero();
  }

  @Test
  void theReserveAllowsAFewRetriesWithoutCalls() {
    RetryBudget b = budget(0.1, 2); // 2 per second over 10 s
    int retries = 0;
    while (b.tryWithdraw()) {
      retries++;
    }
    assertThat(retries).isEqualTo(20);
  }

  @Test
  void depositsAndWithdrawalsExpireAfterTheTtl() {
    RetryBudget b = budget(0.5, 0);
    for (int i = 0; i < 10; i++) {
      b.deposit();
    }
    assertThat(b.balance()).isEqualTo(5);
    now.addAndGet(Duration.ofSeconds(5).toNanos());
    assertThat(b.tryWithdraw()).isTrue();
    assertThat(b.balance()).isEqualTo(4);
    now.addAndGet(Duration.ofSeconds(6).toNanos()); // the deposits are 11 s old, the retry 6 s
    assertThat(b.balance()).isZero();
    now.addAndGet(Duration.ofSeconds(5).toNanos()); // the retry too is gone
    b.deposit();
    b.deposit();
    assertThat(b.balance()).isEqualTo(1);
  }

  @Test
  void noneNeverAllowsARetry() {
    RetryBudget b = RetryBudget.none();
    for (int i = 0; i < 1000; i++) {
      b.deposit();
    }
    assertThat(b.tryWithdraw()).isFalse();
  }

  @Test
  void defaultsAreTenPercentTenPerSecondTenSeconds() {
    RetryBudget b = RetryBudget.defaults();
    assertThat(b.percentCanRetry()).isEqualTo(0.1);
    assertThat(b.minRetriesPerSecond()).isEqualTo(10);
    assertThat(b.ttl()).isEqualTo(Duration.ofSeconds(10));
    assertThat(b.balance()).isEqualTo(100);
  }

  @Test
  void badSettingsAreRefused() {
    assertThatThrownBy(() -> RetryBudget.builder().percentCanRetry(1.5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("percentCanRetry must be from 0 to 1: 1.5");
    assertThatThrownBy(() -> RetryBudget.builder().percentCanRetry(Double.NaN))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RetryBudget.builder().minRetriesPerSecond(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("minRetriesPerSecond must not be negative: -1");
    assertThatThrownBy(() -> RetryBudget.builder().ttl(Duration.ofMillis(10)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("ttl must be from 1s to 1m: PT0.01S");
    assertThatThrownBy(() -> RetryBudget.builder().ttl(Duration.ofMinutes(2)))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
