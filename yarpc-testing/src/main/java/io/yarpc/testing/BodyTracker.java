package io.yarpc.testing;

import static java.util.Objects.requireNonNull;

import io.yarpc.transport.Body;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Checks that bodies are released exactly once and never used afterwards.
 *
 * <p>{@link #track(Body, String)} wraps a body in one that behaves the same and reports to this tracker:
 * the tracker counts every tracked body ({@link #allocated()}) and every release ({@link #released()};
 * {@link Body#release()} is idempotent, so a body counts as released once however often it is
 * released), remembers the label of every body not yet released ({@link #outstandingBodies()}), and
 * records a violation ({@link #violations()}) when a released body is read, streamed or written — which
 * is what a premature or duplicate release in the framework looks like from the outside. The
 * {@link InMemoryTransport} tracks every body it hands out; the {@link TransportConformanceSuite} tracks
 * the bodies it gives to transports.
 *
 * <pre>{@code
 * BodyTracker tracker = new BodyTracker();
 * Body body = tracker.track(Body.of(bytes), "request of echo");
 * clientConfig.call(Request.of(meta, body)).join().body().release();
 * tracker.assertAllReleased(); // the outbound released the request body
 * }</pre>
 *
 * <p>Thread-safe.
 */
public final class BodyTracker {
  /** The longest {@link #assertAllReleased()} waits for releases that happen on other threads. */
  public static final Duration DEFAULT_WAIT = Duration.ofSeconds(10);

  /** How long waiting for releases goes on after the last release seen. */
  public static final Duration QUIET_PERIOD = Duration.ofSeconds(1);

  private final AtomicLong ids = new AtomicLong();
  private final AtomicLong allocated = new AtomicLong();
  private final AtomicLong released = new AtomicLong();
  private final Map<Long, String> outstanding = new ConcurrentHashMap<>();
  private final Queue<String> violations = new ConcurrentLinkedQueue<>();

  /** A tracker that has seen no bodies. */
  public BodyTracker() {}

  /**
   * A body with the bytes and behaviour of {@code body}, counted by this tracker. Releasing it releases
   * {@code body}; reading it after release throws {@link IllegalStateException} and records a violation.
   *
   * @param body the body to wrap; the returned body owns it
   * @param label what the body is, for messages (e.g. {@code "server request body of svc::echo"})
   */
  public Body track(Body body, String label) {
    requireNonNull(body, "body");
    requireNonNull(label, "label");
    long id = ids.incrementAndGet();
    allocated.incrementAndGet();
    outstanding.put(id, label);
    return new TrackedBody(body, id, label);
  }

  /** How many bodies were tracked. */
  public long allocated() {
    return allocated.get();
  }

  /** How many tracked bodies were released (each counted once). */
  public long released() {
    return released.get();
  }

  /** How many tracked bodies have not been released yet. */
  public int outstanding() {
    return outstanding.size();
  }

  /** The labels of the bodies not released yet, oldest first. */
  public List<String> outstandingBodies() {
    return new ArrayList<>(new TreeMap<>(outstanding).values());
  }

  /** Descriptions of every use of a released body seen so far. */
  public List<String> violations() {
    return new ArrayList<>(violations);
  }

  /**
   * Waits until every tracked body is released; returns whether all were. Releases often happen on other
   * threads shortly after a call completes, so this waits while they keep coming, but gives up once no
   * body was released for {@link #QUIET_PERIOD} (a leak does not heal by waiting) or {@code timeout}
   * passed.
   */
  public boolean awaitAllReleased(Duration timeout) throws InterruptedException {
    long now = System.nanoTime();
    long giveUp = now + timeout.toNanos();
    long lastReleased = released.get();
    long lastProgress = now;
    synchronized (this) {
      while (!outstanding.isEmpty()) {
        now = System.nanoTime();
        long count = released.get();
        if (count != lastReleased) {
          lastReleased = count;
          lastProgress = now;
        }
        long left = Math.min(giveUp, lastProgress + QUIET_PERIOD.toNanos()) - now;
        if (left <= 0) {
          return false;
        }
        TimeUnit.NANOSECONDS.timedWait(this, Math.min(left, TimeUnit.MILLISECONDS.toNanos(50)));
      }
    }
    return true;
  }

  /**
   * Fails unless every tracked body gets released (see {@link #awaitAllReleased}, at most
   * {@link #DEFAULT_WAIT}) and no released body was used.
   *
   * @throws AssertionError listing the bodies not released and the violations
   */
  public void assertAllReleased() {
    assertAllReleased(DEFAULT_WAIT);
  }

  /**
   * Fails unless every tracked body gets released (see {@link #awaitAllReleased}, at most {@code timeout})
   * and no released body was used.
   *
   * @throws AssertionError listing the bodies not released and the violations
   */
  public void assertAllReleased(Duration timeout) {
    boolean all;
    try {
      all = awaitAllReleased(timeout);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      all = outstanding.isEmpty();
    }
    List<String> problems = violations();
    if (all && problems.isEmpty()) {
      return;
    }
    StringBuilder sb = new StringBuilder();
    if (!all) {
      List<String> left = outstandingBodies();
      sb.append(left.size())
          .append(" of ")
          .append(allocated())
          .append(" tracked bodies were not released");
      int shown = 0;
      for (String label : left) {
        if (shown++ == 20) {
          sb.append(System.lineSeparator()).append("  ...");
          break;
        }
        sb.append(System.lineSeparator()).append("  ").append(label);
      }
    }
    if (!problems.isEmpty()) {
      if (sb.length() > 0) {
        sb.append(System.lineSeparator());
      }
      sb.append(problems.size()).append(" released bodies were used");
      for (String p : problems) {
        sb.append(System.lineSeparator()).append("  ").append(p);
      }
    }
    throw new AssertionError(sb.toString());
  }

  private void onRelease(long id, String label) {
    if (outstanding.remove(id) == null) {
      violations.add("released twice: " + label);
      return;
    }
    released.incrementAndGet();
    if (outstanding.isEmpty()) {
      synchronized (this) {
        notifyAll();
      }
    }
  }

  private final class TrackedBody extends Body {
    private final Body inner;
    private final long id;
    private final String label;

    TrackedBody(Body inner, long id, String label) {
      this.inner = inner;
      this.id = id;
      this.label = label;
    }

    private void check(String what) {
      if (isReleased()) {
        String violation = what + " after release: " + label;
        violations.add(violation + " (at " + Thread.currentThread().getName() + ")");
        throw new IllegalStateException("body was already released (" + violation + ")");
      }
    }

    @Override
    public long length() {
      return inner.length();
    }

    @Override
    public boolean hasByteAccess() {
      return inner.hasByteAccess();
    }

    @Override
    public boolean isRepeatable() {
      return inner.isRepeatable();
    }

    @Override
    public List<ByteBuffer> byteBuffers() {
      check("byteBuffers()");
      return inner.byteBuffers();
    }

    @Override
    public ByteBuffer arrayView() {
      check("arrayView()");
      return inner.arrayView();
    }

    @Override
    public void copyTo(byte[] destination, int offset) throws IOException {
      check("copyTo()");
      inner.copyTo(destination, offset);
    }

    @Override
    public InputStream openStream() {
      check("openStream()");
      return inner.openStream();
    }

    @Override
    public void writeTo(OutputStream out) throws IOException {
      check("writeTo()");
      inner.writeTo(out);
    }

    @Override
    public byte[] toByteArray() {
      check("toByteArray()");
      return inner.toByteArray();
    }

    @Override
    protected void deallocate() {
      try {
        inner.release();
      } finally {
        onRelease(id, label);
      }
    }

    @Override
    public String toString() {
      return "TrackedBody{" + label + ", length=" + inner.length() + "}";
    }
  }
}
