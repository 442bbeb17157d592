package io.yarpc.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class AbstractLifecycleTest {

  /** Counts calls; fails start or stop on request. */
  private static class Component extends AbstractLifecycle {
    final AtomicInteger starts = new AtomicInteger();
    final AtomicInteger stops = new AtomicInteger();
    Exception startFailure;
    Exception stopFailure;

    @Override
    protected void doStart() throws Exception {
      starts.incrementAndGet();
      if (startFailure != null) {
        throw startFailure;
      }
    }

    @Override
    protected void doStop() throws Exception {
      stops.incrementAndGet();
      if (stopFailure != null) {
        throw stopFailure;
      }
    }

    @Override
    public String toString() {
      return "component";
    }
  }

  @Test
  void startsAndStops() {
    Component c = new Component();
    assertThat(c.isRunning()).isFalse();

    c.start();
    assertThat(c.isRunning()).isTrue();

    c.stop();
    assertThat(c.isRunning()).isFalse();
    assertThat(c.starts).hasValue(1);
    assertThat(c.stops).hasValue(1);
  }

  @Test
  void startIsIdempotent() {
    Component c = new Component();

    c.start();
    c.start();
    c.start();

    assertThat(c.starts).hasValue(1);
    assertThat(c.isRunning()).isTrue();
  }

  @Test
  void stopIsIdempotent() {
    Component c = new Component();
    c.start();

    c.stop();
    c.stop();

    assertThat(c.stops).hasValue(1);
    assertThat(c.isRunning()).isFalse();
  }

  @Test
  void stopBeforeStartStopsWithoutCallingDoStop() {
    Component c = new Component();

    c.stop();
    c.stop();

    assertThat(c.stops).hasValue(0);
    assertThat(c.isRunning()).isFalse();
    assertThatThrownBy(c::start)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("cannot start again");
    assertThat(c.starts).hasValue(0);
  }

  @Test
  void startAfterStopThrows() {
    Component c = new Component();
    c.start();
    c.stop();

    assertThatThrownBy(c::start).isInstanceOf(IllegalStateException.class);
    assertThat(c.starts).hasValue(1);
    assertThat(c.isRunning()).isFalse();
  }

  @Test
  void failedStartCleansUpAndRethrowsRuntimeExceptions() {
    Component c = new Component();
    RuntimeException failure = new IllegalArgumentException("port in use");
    c.startFailure = failure;

    assertThatThrownBy(c::start).isSameAs(failure);

    assertThat(c.stops).as("doStop cleans up what doStart began").hasValue(1);
    assertThat(c.isRunning()).isFalse();
    c.stop();
    assertThat(c.stops).as("no second cleanup").hasValue(1);
    assertThatThrownBy(c::start).isInstanceOf(IllegalStateException.class);
    assertThat(c.starts).hasValue(1);
  }

  @Test
  void failedStartWrapsCheckedExceptions() {
    Component c = new Component();
    IOException failure = new IOException("bind failed");
    c.startFailure = failure;

    assertThatThrownBy(c::start)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("failed to start component")
        .hasMessageContaining("bind failed")
        .hasCause(failure);
    assertThat(c.stops).hasValue(1);
    assertThat(c.isRunning()).isFalse();
  }

  @Test
  void anErrorFromStartAlsoCleansUpAndStops() {
    Component c =
        new Component() {
          @Override
          protected void doStart() throws Exception {
            super.doStart();
            throw new AssertionError("broken");
          }
        };

    assertThatThrownBy(c::start).isInstanceOf(AssertionError.class).hasMessage("broken");

    assertThat(c.stops).hasValue(1);
    assertThat(c.isRunning()).isFalse();
    assertThatThrownBy(c::start)
        .as("doStart runs at most once")
        .isInstanceOf(IllegalStateException.class);
    assertThat(c.starts).hasValue(1);
  }

  @Test
  void aFailingCleanupIsSuppressedIntoTheStartFailure() {
    Component c = new Component();
    RuntimeException failure = new IllegalStateException("start");
    RuntimeException cleanup = new IllegalStateException("cleanup");
    c.startFailure = failure;
    c.stopFailure = cleanup;

    assertThatThrownBy(c::start).isSameAs(failure);
    assertThat(failure.getSuppressed()).containsExactly(cleanup);
  }

  @Test
  void failedStopStillStopsAndIsNotRetried() {
    Component c = new Component();
    c.start();
    RuntimeException failure = new IllegalStateException("close failed");
    c.stopFailure = failure;

    assertThatThrownBy(c::stop).isSameAs(failure);
    assertThat(c.isRunning()).isFalse();
    c.stop();
    assertThat(c.stops).hasValue(1);
  }

  @Test
  void failedStopWrapsCheckedExceptions() {
    Component c = new Component();
    c.start();
    IOException failure = new IOException("flush failed");
    c.stopFailure = failure;

    assertThatThrownBy(c::stop)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("failed to stop component")
        .hasCause(failure);
    assertThat(c.isRunning()).isFalse();
  }

  @Test
  void concurrentStartsStartOnce() throws Exception {
    Component c = new Component();
    int threads = 8;
    CyclicBarrier barrier = new CyclicBarrier(threads);
    CountDownLatch done = new CountDownLatch(threads);
    List<Throwable> failures = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      new Thread(
              () -> {
                try {
                  barrier.await(5, TimeUnit.SECONDS);
                  c.start();
                } catch (Throwable e) {
                  synchronized (failures) {
                    failures.add(e);
                  }
                } finally {
                  done.countDown();
                }
              })
          .start();
    }

    assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(failures).isEmpty();
    assertThat(c.starts).hasValue(1);
    assertThat(c.isRunning()).isTrue();
  }
}
