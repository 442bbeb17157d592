package io.yarpc.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class DeadlineTest {

  @Test
  void afterDurationLeavesAboutThatMuchTime() {
    Deadline d = Deadline.after(Duration.ofSeconds(10));

    assertThat(d.isExpired()).isFalse();
    assertThat(d.remainingNanos())
        .isBetween(TimeUnit.SECONDS.toNanos(9), TimeUnit.SECONDS.toNanos(10));
    assertThat(d.timeRemaining()).isBetween(Duration.ofSeconds(9), Duration.ofSeconds(10));
    assertThat(d.remainingMillis()).isBetween(9_000L, 10_000L);
  }

  @Test
  void afterAmountAndUnit() {
    Deadline d = Deadline.after(250, TimeUnit.MILLISECONDS);

    assertThat(d.isExpired()).isFalse();
    assertThat(d.remainingMillis()).isBetween(1L, 250L);
  }

  @Test
  void zeroAndNegativeTimeoutsAreExpired() {
    assertThat(Deadline.after(Duration.ZERO).isExpired()).isTrue();
    assertThat(Deadline.after(Duration.ofMillis(-5)).isExpired()).isTrue();
    assertThat(Deadline.after(-1, TimeUnit.SECONDS).isExpired()).isTrue();
    assertThat(Deadline.after(Duration.ofMillis(-5)).remainingNanos()).isNegative();
    assertThat(Deadline.after(Duration.ofMillis(-5)).timeRemaining()).isNegative();
  }

  @Test
  void remainingMillisNeverGoesBelowZero() {
    assertThat(Deadline.after(Duration.ofSeconds(-10)).remainingMillis()).isZero();
    assertThat(Deadline.after(Duration.ZERO).remainingMillis()).isZero();
  }

  @Test
  void remainingMillisRoundsUp() {
    // A sub-millisecond remainder still counts as one millisecond, so a TTL of 0 is never sent
    // early.
    Deadline d = Deadline.after(Duration.ofMillis(5).plusNanos(500_000));
    long millis = d.remainingMillis();

    assertThat(millis).isBetween(1L, 6L);
    assertThat(TimeUnit.MILLISECONDS.toNanos(millis)).isGreaterThanOrEqualTo(d.remainingNanos());
  }

  @Test
  void expiresWhenTimePasses() throws InterruptedException {
    Deadline d = Deadline.after(Duration.ofMillis(20));

    Thread.sleep(40);

    assertThat(d.isExpired()).isTrue();
    assertThat(d.remainingMillis()).isZero();
  }

  @Test
  void compareToAndMinPickTheEarlierDeadline() {
    Deadline soon = Deadline.after(Duration.ofSeconds(1));
    Deadline later = Deadline.after(Duration.ofSeconds(60));

    assertThat(soon.compareTo(later)).isNegative();
    assertThat(later.compareTo(soon)).isPositive();
    assertThat(soon.compareTo(soon)).isZero();
    assertThat(soon.min(later)).isSameAs(soon);
    assertThat(later.min(soon)).isSameAs(soon);
    assertThat(soon.min(null)).isSameAs(soon);
    assertThat(soon.min(soon)).isSameAs(soon);
  }

  @Test
  void equalsAndHashCode() {
    Deadline d = Deadline.after(Duration.ofSeconds(5));
    Deadline other = Deadline.after(Duration.ofSeconds(500));

    assertThat(d).isEqualTo(d);
    assertThat(d.hashCode()).isEqualTo(d.hashCode());
    assertThat(d).isNotEqualTo(other);
    assertThat(d).isNotEqualTo(null);
    assertThat(d).isNotEqualTo("deadline");
  }

  @Test
  void toStringShowsTimeLeft() {
    assertThat(Deadline.after(Duration.ofSeconds(30)).toString())
        .startsWith("Deadline[PT")
        .endsWith(" left]");
  }

  @Test
  void nullArgumentsAreRejected() {
    assertThatThrownBy(() -> Deadline.after(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> Deadline.after(1, null)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void hugeTimeoutsDoNotOverflow() {
    Deadline[] far = {
      Deadline.after(Long.MAX_VALUE, TimeUnit.NANOSECONDS),
      Deadline.after(Long.MAX_VALUE, TimeUnit.MILLISECONDS),
      Deadline.after(Long.MAX_VALUE, TimeUnit.DAYS),
      Deadline.after(Duration.ofNanos(Long.MAX_VALUE)),
      Deadline.after(Duration.ofSeconds(Long.MAX_VALUE)),
      Deadline.after(ChronoUnit.FOREVER.getDuration()),
    };
    Deadline soon = Deadline.after(Duration.ofSeconds(1));
    Deadline past = Deadline.after(Duration.ofSeconds(-1));

    for (Deadline d : far) {
      assertThat(d.isExpired()).as("%s", d).isFalse();
      assertThat(d.remainingNanos()).isGreaterThan(TimeUnit.DAYS.toNanos(365 * 50));
      assertThat(d.remainingMillis()).isGreaterThan(TimeUnit.DAYS.toMillis(365 * 50));
      assertThat(d.timeRemaining()).isGreaterThan(Duration.ofDays(365 * 50));
      assertThat(d.compareTo(soon)).isPositive();
      assertThat(d.compareTo(past)).isPositive();
      assertThat(past.compareTo(d)).isNegative();
      assertThat(d.min(past)).isSameAs(past);
      assertThat(d.min(soon)).isSameAs(soon);
      assertThat(soon.min(d)).isSameAs(soon);
    }
  }

  @Test
  void hugeNegativeTimeoutsDoNotOverflow() throws InterruptedException {
    Deadline[] longAgo = {
      Deadline.after(Long.MIN_VALUE, TimeUnit.NANOSECONDS),
      Deadline.after(Long.MIN_VALUE, TimeUnit.MILLISECONDS),
      Deadline.after(Duration.ofNanos(Long.MIN_VALUE)),
      Deadline.after(Duration.ofSeconds(Long.MIN_VALUE)),
      Deadline.after(ChronoUnit.FOREVER.getDuration().negated()),
    };
    Thread.sleep(2); // let the clock move past the creation time
    Deadline future = Deadline.after(Duration.ofSeconds(1));
    Deadline farFuture = Deadline.after(Long.MAX_VALUE, TimeUnit.NANOSECONDS);

    for (Deadline d : longAgo) {
      assertThat(d.isExpired()).as("%s", d).isTrue();
      assertThat(d.remainingNanos()).isNegative();
      assertThat(d.remainingMillis()).isZero();
      assertThat(d.compareTo(future)).isNegative();
      assertThat(d.compareTo(farFuture)).isNegative();
      assertThat(farFuture.min(d)).isSameAs(d);
    }
  }
}
