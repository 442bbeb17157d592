package io.yarpc.transport.http.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The inbound's pending-byte budget: reservations ahead of their bytes (whole-message arrays). */
class PendingBytesTest {
  @Test
  void aReservationFitsTheTotalAndAQuarterOfTheBudgetForBytesNotYetReceived() {
    PendingBytes budget = new PendingBytes(1000); // reservations: 250
    assertThat(budget.tryReserve(200)).isTrue();
    assertThat(budget.tryReserve(51)).as("251 reserved ahead").isFalse();
    assertThat(budget.total()).isEqualTo(200);
    assertThat(budget.unfilled()).isEqualTo(200);

    budget.filled(150); // the first 150 bytes arrived: still held, no longer ahead
    assertThat(budget.unfilled()).isEqualTo(50);
    assertThat(budget.tryReserve(200)).isTrue();
    assertThat(budget.total()).isEqualTo(400);

    budget.add(550); // bytes that were sent
    assertThat(budget.tryReserve(51)).as("the total would pass 1000").isFalse();
    assertThat(budget.unfilled()).as("a refusal leaves nothing reserved").isEqualTo(250);
    assertThat(budget.total()).isEqualTo(950);
    assertThat(budget.tryReserve(0)).isTrue();
  }

  @Test
  void concurrentReservationsNeverPassEitherLimit() throws Exception {
    PendingBytes budget = new PendingBytes(4000); // reservations: 1000
    int threads = 4;
    CountDownLatch go = new CountDownLatch(1);
    AtomicLong most = new AtomicLong();
    AtomicLong mostAhead = new AtomicLong();
    List<Thread> all = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread th =
          new Thread(
              () -> {
                try {
                  go.await();
                } catch (InterruptedException e) {
                  return;
                }
                for (int i = 0; i < 20_000; i++) {
                  if (budget.tryReserve(300)) {
                    most.accumulateAndGet(budget.total(), Math::max);
                    mostAhead.accumulateAndGet(budget.unfilled(), Math::max);
                    budget.filled(300);
                    budget.release(300);
                  }
                }
              });
      th.start();
      all.add(th);
    }
    go.countDown();
    for (Thread th : all) {
      th.join();
    }
    assertThat(mostAhead.get()).isLessThanOrEqualTo(1000);
    assertThat(most.get()).isLessThanOrEqualTo(4000);
    assertThat(budget.total()).isZero();
    assertThat(budget.unfilled()).isZero();
  }
}
