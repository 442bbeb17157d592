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
    ReceivedContent content = new ReceivedContent(alloc, false, -1);
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
    ReceivedContent content = new ReceivedContent(alloc, true, 3000);
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
    ReceivedContent content = new ReceivedContent(PooledByteBufAllocator.DEFAULT, true, 10);
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
    ReceivedContent content = new ReceivedContent(alloc, true, length);
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
  void http2WithoutADeclaredLengthOrWithAWrongOneStillKeepsEveryByte() {
    for (long declared : new long[] {-1, 0, 10, 100_000}) {
      ReceivedContent content = new ReceivedContent(alloc, true, declared);
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
      ReceivedContent content = new ReceivedContent(alloc, copy, -1);
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
    ByteBuf none = new ReceivedContent(alloc, true, 0).take();
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
