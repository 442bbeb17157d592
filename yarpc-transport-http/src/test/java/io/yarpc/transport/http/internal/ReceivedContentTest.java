package io.yarpc.transport.http.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.PreferHeapByteBufAllocator;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.HttpContent;
import io.yarpc.transport.Body;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** How a message's content chunks are kept: as received on HTTP/1.1, copied into pieces on HTTP/2. */
class ReceivedContentTest {
  private final ByteBufAllocator alloc =
      new PreferHeapByteBufAllocator(PooledByteBufAllocator.DEFAULT);
  private final Random random = new Random(7);

  @Test
  void http1KeepsTheChunksOwnBuffers() {
    ReceivedContent content = new ReceivedContent(alloc, false, -1, false);
    HttpContent a = chunk(1000);
    HttpContent b = chunk(3000);
    byte[] expected = concat(a, b);
    content.append(a);
    content.append(b);
    assertThat(content.size()).isEqualTo(4000);
    assertThat(a.refCnt()).as("owned by the composite, not copied").isEqualTo(1);

    ByteBuf all = content.take();
    assertThat(all).isInstanceOf(CompositeByteBuf.class);
    assertThat(((CompositeByteBuf) all).numComponents()).isEqualTo(2);
    assertThat(ByteBufUtil.getBytes(all)).isEqualTo(expected);
    all.release();
    assertThat(a.refCnt()).isZero();
    assertThat(b.refCnt()).isZero();
  }

  @Test
  void http2CopiesEachFrameAndReleasesItAtOnce() {
    ReceivedContent content = new ReceivedContent(alloc, true, 3000, false);
    HttpContent a = chunk(1000);
    HttpContent b = chunk(2000);
    byte[] expected = concat(a, b);
    content.append(a);
    assertThat(a.refCnt()).as("released as soon as copied").isZero();
    content.append(b);
    assertThat(b.refCnt()).isZero();

    ByteBuf all = content.take();
    assertThat(all)
        .as("a message that fits one piece stays contiguous")
        .isNotInstanceOf(CompositeByteBuf.class);
    assertThat(all.nioBufferCount()).isEqualTo(1);
    assertThat(all.hasArray()).as("heap, as the allocator prefers").isTrue();
    assertThat(ByteBufUtil.getBytes(all)).isEqualTo(expected);
    all.release();
  }

  @Test
  void http2PiecesComeFromTheTransportsAllocatorHeapOrDirect() {
    ReceivedContent content = new ReceivedContent(PooledByteBufAllocator.DEFAULT, true, 10, false);
    content.append(chunk(10));
    ByteBuf all = content.take();
    ByteBuf probe = PooledByteBufAllocator.DEFAULT.buffer(1);
    assertThat(all.isDirect()).isEqualTo(probe.isDirect());
    probe.release();
    all.release();
  }

  @Test
  void http2LargeMessagesGoIntoPiecesSizedFromTheDeclaredLength() {
    int length = 2 * ReceivedContent.PIECE + 5000;
    ReceivedContent content = new ReceivedContent(alloc, true, length, false);
    List<HttpContent> chunks = new ArrayList<>();
    for (int left = length; left > 0; ) {
      int n = Math.min(left, 1 + random.nextInt(9000));
      chunks.add(chunk(n));
      left -= n;
    }
    byte[] expected = concat(chunks.toArray(new HttpContent[0]));
    chunks.forEach(content::append);
    assertThat(content.size()).isEqualTo(length);

    CompositeByteBuf all = (CompositeByteBuf) content.take();
    assertThat(all.numComponents()).isEqualTo(3);
    assertThat(all.internalComponent(0).capacity()).isEqualTo(ReceivedContent.PIECE);
    assertThat(all.internalComponent(2).capacity())
        .as("the last piece is what was left")
        .isEqualTo(5000);
    assertThat(ByteBufUtil.getBytes(all)).isEqualTo(expected);
    all.release();
  }

  @Test
  void http2LargeMessageWithADeclaredLengthGoesIntoOneImmutableArray() throws Exception {
    int length = 2 * ReceivedContent.PIECE + 5000;
    ReceivedContent content = new ReceivedContent(alloc, true, length, true);
    HttpContent first = chunk(1000);
    HttpContent rest = chunk(length - 1000);
    byte[] expected = concat(first, rest);
    content.append(first);
    assertThat(first.refCnt()).as("released as soon as copied").isZero();
    assertThat(content.size()).isEqualTo(1000);
    assertThat(content.footprint())
        .as("the whole array counts from its first byte")
        .isEqualTo(length);
    content.append(rest);
    assertThat(content.footprint()).isEqualTo(length);

    ByteBuf all = content.take();
    assertThat(all).isNotInstanceOf(CompositeByteBuf.class);
    assertThat(all.hasArray()).isTrue();
    byte[] array = all.array();
    assertThat(array).as("an array of exactly the message").hasSize(length);
    try (Body body = ReceivedContent.asBody(all)) {
      assertThat(body.isImmutable()).isTrue();
      ByteBuffer view = body.arrayView();
      assertThat(view.array()).as("the body is over that array, not a copy").isSameAs(array);
      assertThat(view.remaining()).isEqualTo(length);
      byte[] got = new byte[length];
      body.copyTo(got, 0);
      assertThat(got).isEqualTo(expected);
    }
  }

  @Test
  void http2WholeArrayOnlyWhenAllowedAndTheDeclaredLengthIsMoreThanAPieceUpToTheMax() {
    assertThat(ReceivedContent.wholeFits(-1)).isFalse();
    assertThat(ReceivedContent.wholeFits(ReceivedContent.PIECE)).isFalse();
    assertThat(ReceivedContent.wholeFits(ReceivedContent.PIECE + 1)).isTrue();
    assertThat(ReceivedContent.wholeFits(ReceivedContent.WHOLE_MAX)).isTrue();
    assertThat(ReceivedContent.wholeFits(ReceivedContent.WHOLE_MAX + 1L)).isFalse();
    for (boolean allowed : new boolean[] {false, true}) {
      long declared = allowed ? ReceivedContent.WHOLE_MAX + 1L : 3 * ReceivedContent.PIECE;
      ReceivedContent content = new ReceivedContent(alloc, true, declared, allowed);
      content.append(chunk(ReceivedContent.PIECE + 1));
      assertThat(content.footprint())
          .as("pieces: only what arrived")
          .isEqualTo(ReceivedContent.PIECE + 1);
      ByteBuf all = content.take();
      try (Body body = ReceivedContent.asBody(all)) {
        assertThat(body.isImmutable()).isFalse();
      }
    }
    ReceivedContent direct =
        new ReceivedContent(PooledByteBufAllocator.DEFAULT, true, 3 * ReceivedContent.PIECE, true);
    direct.append(chunk(10));
    assertThat(direct.footprint())
        .as("a connection receiving into direct memory keeps direct pieces")
        .isEqualTo(10);
    direct.release();
  }

  @Test
  void http2WholeArrayKeepsBytesPastOrShortOfTheDeclaredLength() {
    int length = ReceivedContent.PIECE + 100;
    for (int sent : new int[] {length - 1, length + 1, length + ReceivedContent.PIECE + 3}) {
      ReceivedContent content = new ReceivedContent(alloc, true, length, true);
      HttpContent a = chunk(sent / 2);
      HttpContent b = chunk(sent - sent / 2);
      byte[] expected = concat(a, b);
      content.append(a);
      content.append(b);
      assertThat(content.size()).isEqualTo(sent);
      ByteBuf all = content.take();
      assertThat(ByteBufUtil.getBytes(all)).as("sent %d", sent).isEqualTo(expected);
      all.release();
    }
  }

  @Test
  void http2WholeArrayCanBeGivenUpBeforeItsFirstByteOnly() {
    int length = 3 * ReceivedContent.PIECE;
    ReceivedContent content = new ReceivedContent(alloc, true, length, true);
    assertThat(content.wholePending()).isTrue();
    assertThat(content.wholeLength()).isEqualTo(length);
    content.piecesOnly();
    assertThat(content.wholePending()).isFalse();
    assertThat(content.wholeLength()).isZero();
    content.append(chunk(10));
    assertThat(content.footprint()).as("a piece of what arrived").isEqualTo(10);
    content.release();

    ReceivedContent started = new ReceivedContent(alloc, true, length, true);
    started.append(chunk(10));
    assertThat(started.wholePending()).isFalse();
    started.piecesOnly(); // too late: the array is made and counted
    assertThat(started.wholeLength()).isEqualTo(length);
    assertThat(started.footprint()).isEqualTo(length);
    started.release();
  }

  @Test
  void http2WithoutADeclaredLengthOrWithAWrongOneStillKeepsEveryByte() {
    for (long declared : new long[] {-1, 0, 10, 100_000}) {
      ReceivedContent content = new ReceivedContent(alloc, true, declared, false);
      HttpContent a = chunk(20_000);
      HttpContent b = chunk(7);
      HttpContent empty = new DefaultHttpContent(alloc.buffer(0));
      byte[] expected = concat(a, b);
      content.append(a);
      content.append(empty);
      content.append(b);
      assertThat(empty.refCnt()).isZero();
      ByteBuf all = content.take();
      assertThat(ByteBufUtil.getBytes(all)).as("declared %d", declared).isEqualTo(expected);
      all.release();
    }
  }

  @Test
  void releaseGivesBackWhatWasReceivedOnce() {
    for (boolean copy : new boolean[] {false, true}) {
      ReceivedContent content = new ReceivedContent(alloc, copy, -1, false);
      HttpContent a = chunk(ReceivedContent.PIECE + 1);
      content.append(a);
      content.release();
      content.release();
      assertThat(a.refCnt()).isZero();
      assertThat(content.size()).isZero();
    }
  }

  @Test
  void anEmptyMessageIsAnEmptyBuffer() {
    ByteBuf none = new ReceivedContent(alloc, true, 0, false).take();
    assertThat(none.isReadable()).isFalse();
    none.release();
  }

  private HttpContent chunk(int n) {
    byte[] bytes = new byte[n];
    random.nextBytes(bytes);
    return new DefaultHttpContent(alloc.buffer(n).writeBytes(bytes));
  }

  private static byte[] concat(HttpContent... chunks) {
    int n = 0;
    for (HttpContent c : chunks) {
      n += c.content().readableBytes();
    }
    byte[] out = new byte[n];
    int off = 0;
    for (HttpContent c : chunks) {
      int len = c.content().readableBytes();
      c.content().getBytes(c.content().readerIndex(), out, off, len);
      off += len;
    }
    return out;
  }
}
