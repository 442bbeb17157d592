package io.yarpc.transport;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

class BodyTest {

  private static byte[] bytes(String s) {
    return s.getBytes(UTF_8);
  }

  private static byte[] remaining(ByteBuffer b) {
    byte[] out = new byte[b.remaining()];
    b.duplicate().get(out);
    return out;
  }

  private static byte[] concat(List<ByteBuffer> views) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (ByteBuffer v : views) {
      out.writeBytes(remaining(v));
    }
    return out.toByteArray();
  }

  private static byte[] written(Body body) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    body.writeTo(out);
    return out.toByteArray();
  }

  private static byte[] streamed(Body body) throws IOException {
    try (InputStream in = body.openStream()) {
      return in.readAllBytes();
    }
  }

  private static ByteBuffer direct(String s) {
    byte[] b = bytes(s);
    ByteBuffer d = ByteBuffer.allocateDirect(b.length);
    d.put(b).flip();
    return d;
  }

  /** Checks what every body with byte access over {@code expected} must do. */
  private static void assertByteAccessBody(Body body, byte[] expected) throws IOException {
    assertThat(body.hasByteAccess()).isTrue();
    assertThat(body.length()).isEqualTo(expected.length);
    List<ByteBuffer> views = body.byteBuffers();
    for (ByteBuffer v : views) {
      if (v.isDirect()) {
        assertThat(v.isReadOnly()).as("direct views are read-only").isTrue();
      } else {
        assertThat(v.hasArray()).as("heap views expose their array for in-place parsing").isTrue();
      }
    }
    assertThat(concat(views)).isEqualTo(expected);
    assertThat(body.toByteArray()).isEqualTo(expected);
    assertThat(written(body)).isEqualTo(expected);
    assertThat(streamed(body)).isEqualTo(expected);
    assertThat(streamed(body))
        .as("a byte-access body opens any number of streams")
        .isEqualTo(expected);
    assertThat(concat(body.byteBuffers()))
        .as("reading did not consume the body")
        .isEqualTo(expected);
  }

  @Nested
  class OfByteArray {
    @Test
    void givesByteAccessToTheArray() throws IOException {
      assertByteAccessBody(Body.of(bytes("hello")), bytes("hello"));
    }

    @Test
    void doesNotCopyTheArray() {
      byte[] array = bytes("abc");
      Body body = Body.of(array);

      array[0] = 'X';

      assertThat(remaining(body.byteBuffers().get(0))).isEqualTo(bytes("Xbc"));
    }

    @Test
    void heapViewsExposeTheArrayWithoutCopying() {
      byte[] array = bytes("xabcx");
      ByteBuffer view = Body.of(array, 1, 3).byteBuffers().get(0);

      assertThat(view.hasArray()).isTrue();
      assertThat(view.array()).isSameAs(array);
      assertThat(view.arrayOffset() + view.position()).isEqualTo(1);
      assertThat(view.remaining()).isEqualTo(3);
    }

    @Test
    void toByteArrayIsACopy() {
      byte[] array = bytes("abc");
      Body body = Body.of(array);

      byte[] copy = body.toByteArray();
      copy[0] = 'X';

      assertThat(copy).isNotSameAs(array);
      assertThat(array).isEqualTo(bytes("abc"));
      assertThat(body.toByteArray()).isEqualTo(bytes("abc"));
    }

    @Test
    void emptyArray() throws IOException {
      assertByteAccessBody(Body.of(new byte[0]), new byte[0]);
    }

    @Test
    void nullArrayIsRejected() {
      assertThatThrownBy(() -> Body.of((byte[]) null)).isInstanceOf(NullPointerException.class);
    }
  }

  @Nested
  class OfByteArrayRange {
    @Test
    void coversOnlyTheRange() throws IOException {
      Body body = Body.of(bytes("xxhelloyy"), 2, 5);

      assertByteAccessBody(body, bytes("hello"));
      ByteBuffer view = body.byteBuffers().get(0);
      assertThat(view.position()).as("positioned at the first byte").isZero();
      assertThat(view.remaining()).isEqualTo(5);
    }

    @Test
    void zeroLengthRange() throws IOException {
      assertByteAccessBody(Body.of(bytes("abc"), 3, 0), new byte[0]);
    }

    @Test
    void rejectsRangesOutsideTheArray() {
      byte[] array = new byte[4];
      assertThatThrownBy(() -> Body.of(array, -1, 2)).isInstanceOf(IndexOutOfBoundsException.class);
      assertThatThrownBy(() -> Body.of(array, 0, -1)).isInstanceOf(IndexOutOfBoundsException.class);
      assertThatThrownBy(() -> Body.of(array, 3, 2)).isInstanceOf(IndexOutOfBoundsException.class);
      assertThatThrownBy(() -> Body.of(array, 5, 0)).isInstanceOf(IndexOutOfBoundsException.class);
      assertThatThrownBy(() -> Body.of(array, 1, Integer.MAX_VALUE))
          .isInstanceOf(IndexOutOfBoundsException.class);
      assertThatThrownBy(() -> Body.of(null, 0, 0)).isInstanceOf(NullPointerException.class);
    }
  }

  @Nested
  class OfByteBuffer {
    @Test
    void heapBufferRemainingBytes() throws IOException {
      ByteBuffer heap = ByteBuffer.wrap(bytes("__payload"));
      heap.position(2);

      Body body = Body.of(heap);

      assertByteAccessBody(body, bytes("payload"));
      assertThat(heap.position()).as("the caller's buffer is not moved").isEqualTo(2);
    }

    @Test
    void directBufferStaysDirect() throws IOException {
      ByteBuffer d = direct("direct bytes");

      Body body = Body.of(d);

      assertByteAccessBody(body, bytes("direct bytes"));
      assertThat(body.byteBuffers().get(0).isDirect()).isTrue();
      assertThat(d.position()).isZero();
    }

    @Test
    void doesNotCopy() {
      ByteBuffer heap = ByteBuffer.wrap(bytes("abc"));
      Body body = Body.of(heap);

      heap.put(1, (byte) 'Z');

      assertThat(remaining(body.byteBuffers().get(0))).isEqualTo(bytes("aZc"));
    }

    @Test
    void viewsAreReadOnlyEvenOverAWritableBuffer() {
      Body body = Body.of(direct("abc"));

      ByteBuffer view = body.byteBuffers().get(0);

      assertThat(view.isReadOnly()).isTrue();
      assertThatThrownBy(() -> view.put(0, (byte) 1)).isInstanceOf(ReadOnlyBufferException.class);
    }

    @Test
    void nullBufferIsRejected() {
      assertThatThrownBy(() -> Body.of((ByteBuffer) null)).isInstanceOf(NullPointerException.class);
    }
  }

  @Nested
  class IndependentViews {
    @Test
    void eachCallGivesNewViewsAtTheFirstByte() {
      for (Body body :
          List.of(
              Body.of(bytes("abcdef")),
              Body.of(bytes("..abcdef"), 2, 6),
              Body.of(ByteBuffer.wrap(bytes("abcdef"))),
              Body.of(direct("abcdef")),
              Body.ofBuffers(List.of(direct("abc"), ByteBuffer.wrap(bytes("def"))), null))) {
        List<ByteBuffer> first = body.byteBuffers();
        for (ByteBuffer v : first) {
          v.position(v.limit()); // consume
        }

        List<ByteBuffer> second = body.byteBuffers();

        assertThat(concat(second)).as(body.getClass().getSimpleName()).isEqualTo(bytes("abcdef"));
        for (int i = 0; i < first.size(); i++) {
          assertThat(second.get(i)).isNotSameAs(first.get(i));
        }
        assertThat(body.toByteArray()).isEqualTo(bytes("abcdef"));
      }
    }

    @Test
    void readingAStreamDoesNotMoveTheViews() throws IOException {
      Body body = Body.ofBuffers(List.of(ByteBuffer.wrap(bytes("ab")), direct("cd")), null);
      List<ByteBuffer> views = body.byteBuffers();

      assertThat(streamed(body)).isEqualTo(bytes("abcd"));

      assertThat(concat(views)).isEqualTo(bytes("abcd"));
    }
  }

  @Nested
  class OfBuffers {
    @Test
    void concatenatesInOrder() throws IOException {
      Body body =
          Body.ofBuffers(
              List.of(
                  ByteBuffer.wrap(bytes("one,")), direct("two,"), ByteBuffer.wrap(bytes("three"))),
              null);

      assertByteAccessBody(body, bytes("one,two,three"));
      assertThat(body.byteBuffers()).hasSize(3);
      assertThat(body.byteBuffers().get(1).isDirect()).isTrue();
    }

    @Test
    void usesTheRemainingBytesOfEachBuffer() throws IOException {
      ByteBuffer a = ByteBuffer.wrap(bytes("xxAB"));
      a.position(2);
      ByteBuffer b = ByteBuffer.wrap(bytes("CDyy"));
      b.limit(2);

      assertByteAccessBody(Body.ofBuffers(List.of(a, b), null), bytes("ABCD"));
    }

    @Test
    void emptyBuffersAndEmptyListWork() throws IOException {
      assertByteAccessBody(Body.ofBuffers(List.of(), null), new byte[0]);
      assertByteAccessBody(
          Body.ofBuffers(
              List.of(ByteBuffer.allocate(0), ByteBuffer.wrap(bytes("x")), direct("")), null),
          bytes("x"));
    }

    @Test
    void theListIsCopied() {
      List<ByteBuffer> list = new ArrayList<>(List.of(ByteBuffer.wrap(bytes("a"))));
      Body body = Body.ofBuffers(list, null);

      list.add(ByteBuffer.wrap(bytes("b")));

      assertThat(body.length()).isEqualTo(1);
      assertThat(body.toByteArray()).isEqualTo(bytes("a"));
    }

    @Test
    void writeToCopiesLargeDirectBuffersCompletely() throws IOException {
      byte[] big = new byte[3 * 8192 + 17];
      for (int i = 0; i < big.length; i++) {
        big[i] = (byte) (i * 31);
      }
      ByteBuffer d = ByteBuffer.allocateDirect(big.length);
      d.put(big).flip();

      Body body = Body.ofBuffers(List.of(d, ByteBuffer.wrap(bytes("tail"))), null);

      byte[] expected = Arrays.copyOf(big, big.length + 4);
      System.arraycopy(bytes("tail"), 0, expected, big.length, 4);
      assertThat(written(body)).isEqualTo(expected);
      assertThat(body.toByteArray()).isEqualTo(expected);
      assertThat(streamed(body)).isEqualTo(expected);
    }

    @Test
    void onReleaseRunsExactlyOnceOnTheFirstRelease() {
      AtomicInteger released = new AtomicInteger();
      Body body = Body.ofBuffers(List.of(ByteBuffer.wrap(bytes("x"))), released::incrementAndGet);

      assertThat(released).hasValue(0);
      assertThat(body.isReleased()).isFalse();
      body.release();
      assertThat(released).hasValue(1);
      assertThat(body.isReleased()).isTrue();
      body.release();
      body.close();
      assertThat(released).hasValue(1);
    }

    @Test
    void closeReleases() {
      AtomicInteger released = new AtomicInteger();
      try (Body body = Body.ofBuffers(List.of(), released::incrementAndGet)) {
        assertThat(body.length()).isZero();
      }
      assertThat(released).hasValue(1);
    }

    @RepeatedTest(20)
    void onReleaseRunsExactlyOnceUnderConcurrentReleases() throws Exception {
      AtomicInteger released = new AtomicInteger();
      Body body = Body.ofBuffers(List.of(direct("x")), released::incrementAndGet);
      int threads = 8;
      CyclicBarrier barrier = new CyclicBarrier(threads);
      CountDownLatch done = new CountDownLatch(threads);
      List<Throwable> failures = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        Thread t =
            new Thread(
                () -> {
                  try {
                    barrier.await(5, TimeUnit.SECONDS);
                    body.release();
                  } catch (Throwable e) {
                    synchronized (failures) {
                      failures.add(e);
                    }
                  } finally {
                    done.countDown();
                  }
                });
        t.start();
      }

      assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(failures).isEmpty();
      assertThat(released).hasValue(1);
      assertThat(body.isReleased()).isTrue();
    }

    @Test
    void nullOnReleaseIsAllowed() {
      Body body = Body.ofBuffers(List.of(ByteBuffer.wrap(bytes("x"))), null);

      body.release();
      body.release();

      assertThat(body.isReleased()).isTrue();
    }

    @Test
    void useAfterReleaseThrows() {
      Body body = Body.ofBuffers(List.of(ByteBuffer.wrap(bytes("x"))), null);
      body.release();

      assertThatThrownBy(body::byteBuffers).isInstanceOf(IllegalStateException.class);
      assertThatThrownBy(body::openStream).isInstanceOf(IllegalStateException.class);
      assertThatThrownBy(body::toByteArray).isInstanceOf(IllegalStateException.class);
      assertThatThrownBy(() -> body.writeTo(new ByteArrayOutputStream()))
          .isInstanceOf(IllegalStateException.class);
      assertThat(body.length()).as("length stays readable").isEqualTo(1);
    }

    @Test
    void nullBuffersAreRejected() {
      List<ByteBuffer> withNull = new ArrayList<>();
      withNull.add(null);
      assertThatThrownBy(() -> Body.ofBuffers(withNull, null))
          .isInstanceOf(NullPointerException.class);
      assertThatThrownBy(() -> Body.ofBuffers(null, null)).isInstanceOf(NullPointerException.class);
    }
  }

  @Nested
  class HeapBodyRelease {
    @Test
    void releaseIsIdempotent() {
      Body body = Body.of(bytes("x"));

      body.release();
      body.release();
      body.close();

      assertThat(body.isReleased()).isTrue();
    }

    @Test
    void useAfterReleaseThrowsLikeEveryOtherBody() {
      for (Body body :
          List.of(
              Body.of(bytes("abc")),
              Body.of(bytes("abc"), 1, 1),
              Body.empty(),
              Body.of(direct("x")))) {
        body.release();

        assertThatThrownBy(body::byteBuffers).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(body::openStream).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(body::toByteArray).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> body.writeTo(new ByteArrayOutputStream()))
            .isInstanceOf(IllegalStateException.class);
      }
    }
  }

  @Nested
  class OfInputStream {
    /** Counts closes. */
    private final class TrackedStream extends FilterInputStream {
      final AtomicInteger closes = new AtomicInteger();

      TrackedStream(byte[] data) {
        super(new ByteArrayInputStream(data));
      }

      @Override
      public void close() throws IOException {
        closes.incrementAndGet();
        super.close();
      }
    }

    @Test
    void hasNoByteAccess() {
      Body body = Body.of(new ByteArrayInputStream(bytes("abc")), 3);

      assertThat(body.hasByteAccess()).isFalse();
      assertThatThrownBy(body::byteBuffers)
          .isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("no byte access");
    }

    @Test
    void reportsTheGivenLength() {
      assertThat(Body.of(new ByteArrayInputStream(bytes("abc")), 3).length()).isEqualTo(3);
      assertThat(Body.of(new ByteArrayInputStream(bytes("abc")), -1).length()).isEqualTo(-1);
    }

    @Test
    void opensOnce() throws IOException {
      Body body = Body.of(new ByteArrayInputStream(bytes("abc")), 3);

      assertThat(streamed(body)).isEqualTo(bytes("abc"));

      assertThatThrownBy(body::openStream)
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("once");
      assertThatThrownBy(body::toByteArray).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void toByteArrayWithKnownAndUnknownLength() {
      assertThat(Body.of(new ByteArrayInputStream(bytes("abc")), 3).toByteArray())
          .isEqualTo(bytes("abc"));
      assertThat(Body.of(new ByteArrayInputStream(bytes("abcdef")), -1).toByteArray())
          .isEqualTo(bytes("abcdef"));
    }

    @Test
    void writeToCopiesTheStreamAndUsesItUp() throws IOException {
      TrackedStream in = new TrackedStream(bytes("streamed"));
      Body body = Body.of(in, -1);

      assertThat(written(body)).isEqualTo(bytes("streamed"));
      assertThatThrownBy(body::openStream).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void releaseClosesTheStreamOnce() {
      TrackedStream in = new TrackedStream(bytes("abc"));
      Body body = Body.of(in, 3);

      body.release();
      body.release();

      assertThat(in.closes).hasValue(1);
      assertThatThrownBy(body::openStream).isInstanceOf(IllegalStateException.class);
      assertThatThrownBy(() -> body.writeTo(new ByteArrayOutputStream()))
          .isInstanceOf(IllegalStateException.class);
      assertThatThrownBy(body::toByteArray).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void releaseSwallowsCloseFailures() {
      InputStream failing =
          new ByteArrayInputStream(new byte[0]) {
            @Override
            public void close() throws IOException {
              throw new IOException("boom");
            }
          };
      Body body = Body.of(failing, 0);

      body.release();

      assertThat(body.isReleased()).isTrue();
    }

    @Test
    void nullStreamIsRejected() {
      assertThatThrownBy(() -> Body.of((InputStream) null, 0))
          .isInstanceOf(NullPointerException.class)
          .hasMessageContaining("in");
    }
  }

  @Nested
  class Lazy {
    @Test
    void serialisesNothingUntilWritten() throws IOException {
      AtomicInteger calls = new AtomicInteger();
      Body body =
          Body.lazy(
              5,
              out -> {
                calls.incrementAndGet();
                out.write(bytes("lazy!"));
              });

      assertThat(calls).hasValue(0);
      assertThat(body.length()).isEqualTo(5);
      assertThat(body.hasByteAccess()).isFalse();
      assertThat(calls).hasValue(0);

      assertThat(written(body)).isEqualTo(bytes("lazy!"));
      assertThat(calls).hasValue(1);
    }

    @Test
    void writeToPassesTheTargetStreamToTheWriter() throws IOException {
      ByteArrayOutputStream target = new ByteArrayOutputStream();
      AtomicBoolean sameStream = new AtomicBoolean();
      Body body = Body.lazy(1, out -> sameStream.set(out == target));

      body.writeTo(target);

      assertThat(sameStream).isTrue();
    }

    @Test
    void openStreamFallsBackToWritingIntoMemory() throws IOException {
      AtomicInteger calls = new AtomicInteger();
      Body body =
          Body.lazy(
              3,
              out -> {
                calls.incrementAndGet();
                out.write(bytes("abc"));
              });

      assertThat(streamed(body)).isEqualTo(bytes("abc"));
      assertThat(calls).hasValue(1);
      assertThat(body.toByteArray()).isEqualTo(bytes("abc"));
    }

    @Test
    void zeroLength() throws IOException {
      Body body = Body.lazy(0, out -> {});

      assertThat(body.length()).isZero();
      assertThat(written(body)).isEmpty();
      assertThat(streamed(body)).isEmpty();
      assertThat(body.toByteArray()).isEmpty();
    }

    @Test
    void writerFailuresSurface() {
      Body body =
          Body.lazy(
              1,
              out -> {
                throw new IOException("cannot serialise");
              });

      assertThatThrownBy(() -> body.writeTo(new ByteArrayOutputStream()))
          .isInstanceOf(IOException.class)
          .hasMessage("cannot serialise");
      assertThatThrownBy(body::openStream)
          .isInstanceOf(UncheckedIOException.class)
          .hasRootCauseMessage("cannot serialise");
      assertThatThrownBy(body::toByteArray).isInstanceOf(UncheckedIOException.class);
    }

    @Test
    void needsALengthAndAWriter() {
      assertThatThrownBy(() -> Body.lazy(-1, out -> {}))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("-1");
      assertThatThrownBy(() -> Body.lazy(1, null))
          .isInstanceOf(NullPointerException.class)
          .hasMessageContaining("writer");
    }

    @Test
    void useAfterReleaseThrows() {
      AtomicInteger calls = new AtomicInteger();
      Body body = Body.lazy(1, out -> calls.incrementAndGet());
      body.release();
      body.release();

      assertThatThrownBy(() -> body.writeTo(new ByteArrayOutputStream()))
          .isInstanceOf(IllegalStateException.class);
      assertThatThrownBy(body::openStream).isInstanceOf(IllegalStateException.class);
      assertThatThrownBy(body::toByteArray).isInstanceOf(IllegalStateException.class);
      assertThat(calls).hasValue(0);
    }
  }

  @Nested
  class Empty {
    @Test
    void hasZeroBytesWithByteAccess() throws IOException {
      Body body = Body.empty();

      assertByteAccessBody(body, new byte[0]);
      assertThat(body.byteBuffers()).hasSize(1);
    }

    @Test
    void releasingOneEmptyBodyDoesNotAffectAnother() {
      Body first = Body.empty();
      first.release();

      Body second = Body.empty();

      assertThat(second.isReleased()).isFalse();
      assertThat(second.toByteArray()).isEmpty();
    }
  }

  @Nested
  class CustomBodies {
    /** A subclass that brings its own deallocation, as transports do. */
    private final class Pooled extends Body {
      final AtomicInteger deallocations = new AtomicInteger();

      @Override
      public long length() {
        return 2;
      }

      @Override
      public InputStream openStream() {
        checkNotReleased();
        return new ByteArrayInputStream(bytes("hi"));
      }

      @Override
      protected void deallocate() {
        deallocations.incrementAndGet();
      }
    }

    @Test
    void deallocateRunsOnceAndDefaultsWork() throws IOException {
      Pooled body = new Pooled();

      assertThat(body.hasByteAccess()).isFalse();
      assertThatThrownBy(body::byteBuffers).isInstanceOf(UnsupportedOperationException.class);
      assertThat(written(body)).isEqualTo(bytes("hi"));
      assertThat(body.toByteArray()).isEqualTo(bytes("hi"));

      body.release();
      body.close();

      assertThat(body.deallocations).hasValue(1);
      assertThatThrownBy(body::toByteArray).isInstanceOf(IllegalStateException.class);
    }
  }

  @Nested
  class ArrayViewAndCopyTo {
    @Test
    void aHeapBodyIsItsOwnArrayView() throws IOException {
      byte[] backing = bytes("xxhelloyy");
      Body body = Body.of(backing, 2, 5);
      ByteBuffer view = body.arrayView();
      assertThat(view.array()).isSameAs(backing);
      assertThat(view.arrayOffset() + view.position()).isEqualTo(2);
      assertThat(view.remaining()).isEqualTo(5);

      byte[] dst = new byte[8];
      body.copyTo(dst, 3);
      assertThat(Arrays.copyOfRange(dst, 3, 8)).isEqualTo(bytes("hello"));
      assertThatThrownBy(() -> body.copyTo(new byte[8], 4))
          .isInstanceOf(IndexOutOfBoundsException.class);
    }

    @Test
    void onlyASingleHeapBufferHasAnArrayView() {
      ByteBuffer heap = ByteBuffer.wrap(bytes("--abc")).position(2);
      ByteBuffer view = Body.of(heap).arrayView();
      assertThat(view.array()).isSameAs(heap.array());
      assertThat(remaining(view)).isEqualTo(bytes("abc"));

      ByteBuffer direct = ByteBuffer.allocateDirect(3).put(bytes("abc")).flip();
      assertThat(Body.of(direct).arrayView()).as("direct").isNull();
      assertThat(Body.of(heap.asReadOnlyBuffer()).arrayView())
          .as("read-only heap hides its array")
          .isNull();
      assertThat(
              Body.ofBuffers(
                      List.of(ByteBuffer.wrap(bytes("a")), ByteBuffer.wrap(bytes("b"))), null)
                  .arrayView())
          .as("split")
          .isNull();
      assertThat(Body.of(new ByteArrayInputStream(bytes("abc")), 3).arrayView())
          .as("stream")
          .isNull();
    }

    @Test
    void splitBodiesCopyEveryPieceInOrderAndStayAsTheyWere() throws IOException {
      ByteBuffer a = ByteBuffer.wrap(bytes("..one")).position(2);
      ByteBuffer b = ByteBuffer.allocateDirect(8).put(bytes("~~two")).flip().position(2);
      ByteBuffer c = ByteBuffer.wrap(bytes("three"));
      Body body = Body.ofBuffers(List.of(a, b, c), null);
      for (int round = 0; round < 2; round++) {
        byte[] dst = new byte[13];
        body.copyTo(dst, 2);
        assertThat(Arrays.copyOfRange(dst, 2, 13)).isEqualTo(bytes("onetwothree"));
      }
      assertThat(a.position()).isEqualTo(2);
      assertThat(b.position()).isEqualTo(2);
      assertThat(concat(body.byteBuffers())).isEqualTo(bytes("onetwothree"));
      assertThatThrownBy(() -> body.copyTo(new byte[10], 0))
          .isInstanceOf(IndexOutOfBoundsException.class);
    }

    @Test
    void streamBodiesAreReadOnceAndMustHaveTheirLength() throws IOException {
      byte[] dst = new byte[3];
      Body.of(new ByteArrayInputStream(bytes("abc")), 3).copyTo(dst, 0);
      assertThat(dst).isEqualTo(bytes("abc"));

      assertThatThrownBy(
              () -> Body.of(new ByteArrayInputStream(bytes("abc")), -1).copyTo(new byte[3], 0))
          .isInstanceOf(IllegalStateException.class);
      assertThatThrownBy(
              () -> Body.of(new ByteArrayInputStream(bytes("ab")), 3).copyTo(new byte[3], 0))
          .isInstanceOf(java.io.EOFException.class)
          .hasMessageContaining("2 of 3");
    }

    @Test
    void releasedBodiesRefuse() {
      for (Body body : List.of(Body.of(bytes("abc")), Body.of(ByteBuffer.wrap(bytes("abc"))))) {
        body.release();
        assertThatThrownBy(() -> body.copyTo(new byte[3], 0))
            .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(body::arrayView).isInstanceOf(IllegalStateException.class);
      }
    }

    @Test
    void toByteArrayGivesAFreshCopy() {
      byte[] backing = bytes("abc");
      byte[] copy = Body.of(ByteBuffer.wrap(backing)).toByteArray();
      assertThat(copy).isEqualTo(backing).isNotSameAs(backing);
    }
  }
}
