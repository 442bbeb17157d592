package io.yarpc.benchmarks.load;

import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.yarpc.benchmarks.proto.EchoGrpc;
import io.yarpc.benchmarks.proto.EchoMessage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * A bidirectional streaming echo load: one stream, {@code window} messages outstanding (sent and not yet
 * echoed back); each echo received is counted, its round trip recorded (the server echoes in order), and
 * the next message sent. Sends are serialised under a lock, as grpc's request observer requires.
 */
final class StreamDriver implements ClientResponseObserver<EchoMessage, EchoMessage> {
  private final EchoMessage message;
  private final int window;
  private final Recorder recorder = new Recorder(TimeUnit.SECONDS.toNanos(60), 3);
  private final LongAdder received = new LongAdder();
  private final long[] sentAt;
  private final CountDownLatch finished = new CountDownLatch(1);
  private final AtomicReference<Throwable> error = new AtomicReference<>();
  private final Object lock = new Object();
  private ClientCallStreamObserver<EchoMessage> requests;
  private long sent; // guarded by lock
  private long echoed; // guarded by lock
  private boolean stopping; // guarded by lock
  private boolean halfClosed; // guarded by lock

  StreamDriver(EchoMessage message, int window) {
    this.message = message;
    this.window = window;
    this.sentAt = new long[window];
  }

  /** Opens the stream on {@code stub} and fills the window. */
  void start(EchoGrpc.EchoStub stub) {
    stub.withDeadlineAfter(10, TimeUnit.MINUTES).stream(this);
    synchronized (lock) {
      while (sent - echoed < window) {
        send();
      }
    }
  }

  @Override
  public void beforeStart(ClientCallStreamObserver<EchoMessage> requestStream) {
    this.requests = requestStream;
  }

  private void send() {
    sentAt[(int) (sent % window)] = System.nanoTime();
    sent++;
    requests.onNext(message);
  }

  @Override
  public void onNext(EchoMessage value) {
    long now = System.nanoTime();
    synchronized (lock) {
      long started = sentAt[(int) (echoed % window)];
      echoed++;
      recorder.recordValue(Math.min(now - started, TimeUnit.SECONDS.toNanos(60)));
      received.increment();
      if (!stopping) {
        send();
      } else if (echoed == sent && !halfClosed) {
        halfClosed = true;
        requests.onCompleted();
      }
    }
  }

  @Override
  public void onError(Throwable t) {
    error.set(t);
    finished.countDown();
  }

  @Override
  public void onCompleted() {
    finished.countDown();
  }

  /** Messages echoed back so far. */
  long received() {
    return received.sum();
  }

  /** The latencies recorded since the previous call (nanoseconds). */
  Histogram intervalHistogram() {
    return recorder.getIntervalHistogram();
  }

  /** The stream's failure, or null. */
  Throwable error() {
    return error.get();
  }

  /** What the stream did so far, for failure reports. */
  String describe() {
    synchronized (lock) {
      return "sent "
          + sent
          + ", echoed "
          + echoed
          + (stopping ? ", stopping" : "")
          + (halfClosed ? ", half-closed" : "")
          + (requests != null ? ", ready " + requests.isReady() : "")
          + (error.get() != null ? ", " + error.get() : "");
    }
  }

  /** Stops sending, lets the outstanding echoes arrive, closes the stream; waits at most the timeout. */
  boolean stop(long timeoutMillis) throws InterruptedException {
    synchronized (lock) {
      stopping = true;
      if (echoed == sent && !halfClosed) {
        halfClosed = true;
        requests.onCompleted();
      }
    }
    boolean done = finished.await(timeoutMillis, TimeUnit.MILLISECONDS);
    if (!done) {
      requests.cancel("benchmark stream did not finish", null);
    }
    return done;
  }
}
