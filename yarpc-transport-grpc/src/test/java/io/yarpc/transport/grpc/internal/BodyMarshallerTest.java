package io.yarpc.transport.grpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Drainable;
import io.grpc.KnownLength;
import io.grpc.internal.CompositeReadableBuffer;
import io.grpc.internal.ReadableBuffers;
import io.grpc.netty.NettyReadableBuffers;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.yarpc.transport.Body;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;

/**
 * The marshaller on grpc-java's own stream classes over pooled direct Netty buffers, exactly as grpc-netty
 * hands a received message to {@code parse}: reference counts prove the buffers are detached (closing the
 * original stream frees nothing), kept while the body lives, and released exactly once.
 */
class BodyMarshallerTest {
  private final ReceiveStats stats = new ReceiveStats();
  private final BodyMarshaller marshaller = new BodyMarshaller(stats);

  private static ByteBuf direct(byte[] bytes) {
    ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(bytes.length);
    b.writeBytes(bytes);
    return b;
  }

  private static byte[] random(int n, long seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  /** A message of two frames, as grpc-java's deframer builds it. */
  private static InputStream grpcMessage(ByteBuf... frames) {
    CompositeReadableBuffer composite = new CompositeReadableBuffer();
    for (ByteBuf f : frames) {
      composite.addBuffer(NettyReadableBuffers.wrap(f));
    }
    return ReadableBuffers.openStream(composite, true);
  }

  private static byte[] bytesOf(List<ByteBuffer> views) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (ByteBuffer v : views) {
      byte[] chunk = new byte[v.remaining()];
      v.get(chunk);
      out.writeBytes(chunk);
    }
    return out.toByteArray();
  }

  @Test
  void parseDetachesGrpcBuffersAndReleasesThemExactlyOnce() throws Exception {
    byte[] first = random(3000, 1);
    byte[] second = random(5000, 2);
    ByteBuf a = direct(first);
    ByteBuf b = direct(second);
    InputStream message = grpcMessage(a, b);

    Body body = marshaller.parse(message);
    message.close(); // grpc-java closes the stream right after parse

    assertThat(a.refCnt()).as("first frame kept alive by the body").isEqualTo(1);
    assertThat(b.refCnt()).as("second frame kept alive by the body").isEqualTo(1);
    assertThat(body.hasByteAccess()).isTrue();
    assertThat(body.length()).isEqualTo(8000);
    List<ByteBuffer> views = body.byteBuffers();
    assertThat(views).hasSize(2).allMatch(ByteBuffer::isDirect);
    ByteArrayOutputStream expected = new ByteArrayOutputStream();
    expected.writeBytes(first);
    expected.writeBytes(second);
    assertThat(bytesOf(views)).isEqualTo(expected.toByteArray());
    assertThat(stats.detached()).isEqualTo(1);
    assertThat(stats.copied()).isZero();

    body.release();
    assertThat(a.refCnt()).isZero();
    assertThat(b.refCnt()).isZero();
    body.release(); // idempotent: a second release must not touch the (already freed) buffers
    body.close();
    assertThat(stats.released()).isEqualTo(1);
    assertThat(stats.outstanding()).isZero();
    assertThatThrownBy(body::byteBuffers).isInstanceOf(IllegalStateException.class);
  }

  /**
   * A message as grpc-java hands it over: a direct piece, a heap piece grpc-java merged from tiny reads,
   * another direct piece; {@code a} and {@code c} are the direct buffers, {@code merged} the heap piece.
   */
  private record ThreePieces(
      InputStream message, ByteBuf a, ByteBuf c, byte[] merged, byte[] expected) {}

  private ThreePieces threePieces(long seed) {
    byte[] first = random(20_000, seed);
    byte[] merged = random(1500, seed + 1); // grpc-java merges runs of tiny reads into a heap array
    byte[] last = random(30_000, seed + 2);
    ByteBuf a = direct(first);
    ByteBuf c = direct(last);
    CompositeReadableBuffer composite = new CompositeReadableBuffer();
    composite.addBuffer(NettyReadableBuffers.wrap(a));
    composite.addBuffer(ReadableBuffers.wrap(merged));
    composite.addBuffer(NettyReadableBuffers.wrap(c));
    ByteArrayOutputStream expected = new ByteArrayOutputStream();
    expected.writeBytes(first);
    expected.writeBytes(merged);
    expected.writeBytes(last);
    return new ThreePieces(
        ReadableBuffers.openStream(composite, true), a, c, merged, expected.toByteArray());
  }

  @Test
  void heapPiecesMergedByGrpcAreCopiedAndTheRestStaysViews() throws Exception {
    ThreePieces pieces = threePieces(10);
    ByteBuf a = pieces.a();
    ByteBuf c = pieces.c();
    byte[] merged = pieces.merged();
    Body body = marshaller.parse(pieces.message());
    pieces.message().close();

    List<ByteBuffer> views = body.byteBuffers();
    assertThat(bytesOf(views)).isEqualTo(pieces.expected());
    assertThat(views.get(0).isDirect()).isTrue();
    assertThat(views.get(views.size() - 1).isDirect())
        .as("the rest of the last frame is a view again")
        .isTrue();
    long heap =
        body.byteBuffers().stream()
            .filter(v -> !v.isDirect())
            .mapToLong(ByteBuffer::remaining)
            .sum();
    assertThat(heap)
        .as("copied: the merged piece and at most one chunk of what follows")
        .isEqualTo(stats.copiedBytes())
        .isGreaterThanOrEqualTo(merged.length)
        .isLessThan(merged.length + 4096);
    assertThat(stats.detached()).isEqualTo(1);
    assertThat(stats.copied()).isZero();
    assertThat(a.refCnt()).isEqualTo(1);
    assertThat(c.refCnt()).isEqualTo(1);
    body.release();
    assertThat(a.refCnt()).isZero();
    assertThat(c.refCnt()).isZero();
  }

  @Test
  void concurrentReleasesFreeOnce() throws Exception {
    ByteBuf a = direct(random(100, 3));
    InputStream message = grpcMessage(a);
    Body body = marshaller.parse(message);
    message.close();
    CountDownLatch go = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>();
    AtomicInteger failures = new AtomicInteger();
    for (int i = 0; i < 8; i++) {
      Thread t =
          new Thread(
              () -> {
                try {
                  go.await();
                  body.release();
                } catch (Throwable e) {
                  failures.incrementAndGet();
                }
              });
      t.start();
      threads.add(t);
    }
    go.countDown();
    for (Thread t : threads) {
      t.join();
    }
    assertThat(failures).hasValue(0);
    assertThat(a.refCnt()).isZero();
    assertThat(stats.released()).isEqualTo(1);
  }

  @Test
  void emptyMessageIsReleasedAtOnce() throws Exception {
    ByteBuf a = direct(new byte[0]);
    InputStream message = grpcMessage(a);
    Body body = marshaller.parse(message);
    message.close();
    assertThat(a.refCnt()).isZero();
    assertThat(body.length()).isZero();
    assertThat(stats.detached()).isZero();
  }

  @Test
  void slicedFrameKeepsOnlyTheMessageBytes() throws Exception {
    byte[] bytes = random(1000, 4);
    ByteBuf whole = direct(bytes);
    // the deframer slices a message out of a larger frame
    ByteBuf slice = whole.retainedSlice(100, 500);
    whole.release();
    InputStream message = grpcMessage(slice);
    Body body = marshaller.parse(message);
    message.close();
    byte[] expected = new byte[500];
    System.arraycopy(bytes, 100, expected, 0, 500);
    assertThat(body.toByteArray()).isEqualTo(expected);
    body.release();
    assertThat(whole.refCnt()).isZero();
  }

  @Test
  void streamWithoutByteBuffersIsCopiedOnce() throws Exception {
    byte[] bytes = random(2000, 5);
    ByteArrayOutputStream gz = new ByteArrayOutputStream();
    try (GZIPOutputStream out = new GZIPOutputStream(gz)) {
      out.write(bytes);
    }
    Body body = marshaller.parse(new GZIPInputStream(new ByteArrayInputStream(gz.toByteArray())));
    assertThat(body.hasByteAccess()).isTrue();
    assertThat(body.toByteArray()).isEqualTo(bytes);
    assertThat(stats.copied()).isEqualTo(1);
    assertThat(stats.detached()).isZero();
    body.release();
  }

  @Test
  void outgoingStreamDrainsTheBodyIntoTheFramerAndReleasesIt() throws Exception {
    byte[] bytes = random(10_000, 6);
    AtomicInteger releases = new AtomicInteger();
    Body body = Body.ofBuffers(List.of(ByteBuffer.wrap(bytes)), releases::incrementAndGet);
    InputStream in = marshaller.stream(body);
    assertThat(in).isInstanceOf(Drainable.class).isInstanceOf(KnownLength.class);
    assertThat(in.available()).isEqualTo(bytes.length);
    ByteArrayOutputStream framer = new ByteArrayOutputStream();
    assertThat(((Drainable) in).drainTo(framer)).isEqualTo(bytes.length);
    assertThat(framer.toByteArray()).isEqualTo(bytes);
    assertThat(releases).as("released once drained").hasValue(1);
    assertThat(in.available()).isZero();
    in.close();
    assertThat(releases).hasValue(1);
  }

  @Test
  void lazyBodyIsWrittenOnlyWhenDrained() throws Exception {
    AtomicInteger writes = new AtomicInteger();
    Body lazy =
        Body.lazy(
            3,
            out -> {
              writes.incrementAndGet();
              out.write(new byte[] {1, 2, 3});
            });
    InputStream in = marshaller.stream(lazy);
    assertThat(writes).hasValue(0);
    assertThat(in.available()).isEqualTo(3);
    ByteArrayOutputStream framer = new ByteArrayOutputStream();
    ((Drainable) in).drainTo(framer);
    assertThat(framer.toByteArray()).containsExactly(1, 2, 3);
    assertThat(writes).hasValue(1);
    assertThat(lazy.isReleased()).isTrue();
  }

  @Test
  void unknownLengthBodyIsBufferedSoTheFrameKnowsItsLength() throws Exception {
    byte[] bytes = random(300, 7);
    Body stream = Body.of(new ByteArrayInputStream(bytes), -1);
    InputStream in = marshaller.stream(stream);
    assertThat(stream.isReleased())
        .as("the original stream body was consumed and released")
        .isTrue();
    assertThat(in.available()).isEqualTo(300);
    ByteArrayOutputStream framer = new ByteArrayOutputStream();
    ((Drainable) in).drainTo(framer);
    assertThat(framer.toByteArray()).isEqualTo(bytes);
  }

  @Test
  void closingAnUnsentStreamReleasesTheBody() throws Exception {
    Body body = Body.of(new byte[] {1});
    InputStream in = marshaller.stream(body);
    in.close(); // grpc-java closes messages it drops (e.g. a call cancelled before it was sent)
    assertThat(body.isReleased()).isTrue();
  }

  @Test
  void readFallbackStillWorks() throws Exception {
    byte[] bytes = random(50, 8);
    InputStream in = marshaller.stream(Body.of(bytes));
    assertThat(in.readAllBytes()).isEqualTo(bytes);
    in.close();
  }

  @Test
  void copyToReadsGrpcBuffersWithoutCollectingViewsAndCanBeRepeated() throws Exception {
    ThreePieces pieces = threePieces(20);
    ByteBuf a = pieces.a();
    ByteBuf c = pieces.c();
    byte[] expected = pieces.expected();
    Body body = marshaller.parse(pieces.message());
    pieces.message().close();

    int length = expected.length;
    for (int round = 0; round < 2; round++) {
      byte[] dst = new byte[length + 3];
      body.copyTo(dst, 3);
      assertThat(java.util.Arrays.copyOfRange(dst, 3, dst.length)).isEqualTo(expected);
    }
    assertThat(stats.copiedBytes()).as("no views collected, so nothing merged was copied").isZero();
    assertThat(body.arrayView()).isNull();
    assertThatThrownBy(() -> body.copyTo(new byte[length - 1], 0))
        .isInstanceOf(IndexOutOfBoundsException.class);

    assertThat(bytesOf(body.byteBuffers())).as("views after copies").isEqualTo(expected);
    byte[] again = new byte[length];
    body.copyTo(again, 0);
    assertThat(again).isEqualTo(expected);

    body.release();
    body.release();
    assertThat(a.refCnt()).isZero();
    assertThat(c.refCnt()).isZero();
    assertThat(stats.released()).isEqualTo(1);
    assertThatThrownBy(() -> body.copyTo(new byte[length], 0))
        .isInstanceOf(IllegalStateException.class);
  }
}
