package io.yarpc.benchmarks.load;

import io.grpc.stub.StreamObserver;
import io.yarpc.benchmarks.proto.EchoGrpc;
import io.yarpc.benchmarks.proto.EchoMessage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * A closed-loop unary load: {@code inflight} slots, each calling {@code Unary} with the same request and,
 * when the response arrives, recording the latency and calling again from the completing thread (the
 * client's callback thread). Every call has a 30 s deadline ({@code withDeadlineAfter}), as production
 * calls do and as YARPC requires.
 */
final class UnaryDriver {
  private static final long DEADLINE_SECONDS = 30;

  private final EchoGrpc.EchoStub stub;
  private final EchoMessage request;
  private final Recorder recorder = new Recorder(TimeUnit.SECONDS.toNanos(60), 3);
  private final LongAdder completed = new LongAdder();
  private final LongAdder errors = new LongAdder();
  private final AtomicInteger outstanding = new AtomicInteger();
  private final AtomicReference<Throwable> lastError = new AtomicReference<>();
  private volatile boolean running;

  UnaryDriver(EchoGrpc.EchoStub stub, EchoMessage request) {
    this.stub = stub;
    this.request = request;
  }

  /** Starts {@code inflight} slots calling in a loop. */
  void start(int inflight) {
    running = true;
    for (int i = 0; i < inflight; i++) {
      new Slot().call();
    }
  }

  /** Completed calls so far. */
  long completed() {
    return completed.sum();
  }

  /** Failed calls so far. */
  long errors() {
    return errors.sum();
  }

  /** The last failure, or null. */
  Throwable lastError() {
    return lastError.get();
  }

  /** The latencies recorded since the previous call (nanoseconds). */
  Histogram intervalHistogram() {
    return recorder.getIntervalHistogram();
  }

  /** Stops issuing calls and waits at most {@code timeoutMillis} for those in flight. */
  boolean stop(long timeoutMillis) throws InterruptedException {
    running = false;
    long deadline = System.currentTimeMillis() + timeoutMillis;
    while (outstanding.get() > 0 && System.currentTimeMillis() < deadline) {
      Thread.sleep(5);
    }
    return outstanding.get() == 0;
  }

  /** One call after the other; reused across its calls. */
  private final class Slot implements StreamObserver<EchoMessage> {
    private long started;
    private boolean failed;

    void call() {
      outstanding.incrementAndGet();
      failed = false;
      started = System.nanoTime();
      try {
        stub.withDeadlineAfter(DEADLINE_SECONDS, TimeUnit.SECONDS).unary(request, this);
      } catch (RuntimeException e) {
        onError(e);
      }
    }

    @Override
    public void onNext(EchoMessage value) {}

    @Override
    public void onError(Throwable t) {
      failed = true;
      errors.increment();
      lastError.set(t);
      done();
    }

    @Override
    public void onCompleted() {
      recorder.recordValue(Math.min(System.nanoTime() - started, TimeUnit.SECONDS.toNanos(60)));
      completed.increment();
      done();
    }

    private void done() {
      outstanding.decrementAndGet();
      if (running) {
        if (failed) {
          try {
            Thread.sleep(1); // do not spin on a broken system
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
          }
        }
        call();
      }
    }
  }
}
