package io.yarpc.transport.tchannel.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A range of a frame that spans two reads, as the assembler keeps an arg chunk: a slice of the one read it
 * lies in, or a composite of slices of both, never a view of the frame; its views are the reads' own
 * arrays; and each read is let go once the frame and the ranges are released.
 */
class FramePiecesTest {
  private final byte[] bytes = new byte[3000];
  private ByteBuf first;
  private ByteBuf second;
  private CompositeByteBuf frame; // bytes 0..999 in the first read, 1000..2999 in the second

  @BeforeEach
  void frameAcrossTwoReads() {
    new Random(9).nextBytes(bytes);
    first = Unpooled.wrappedBuffer(bytes.clone(), 0, 1000);
    second = Unpooled.wrappedBuffer(Arrays.copyOfRange(bytes, 1000, 3000));
    frame =
        PooledByteBufAllocator.DEFAULT
            .compositeBuffer(2)
            .addComponent(true, first.retainedSlice())
            .addComponent(true, second.retainedSlice());
  }

  @AfterEach
  void everyReadIsLetGo() {
    frame.release();
    first.release();
    second.release();
    assertThat(first.refCnt()).isZero();
    assertThat(second.refCnt()).isZero();
  }

  @Test
  void aRangeInOneReadIsASliceOfThatRead() {
    ByteBuf range = FramePieces.retainedRange(frame, 1200, 500);
    try {
      assertThat(range.hasArray()).isTrue();
      assertThat(range.array()).isSameAs(second.array());
      assertThat(bytesOf(range)).isEqualTo(Arrays.copyOfRange(bytes, 1200, 1700));
      List<ByteBuffer> views = FramePieces.views(List.of(range));
      assertThat(views).hasSize(1);
      assertThat(views.get(0).array()).isSameAs(second.array());
      assertThat(second.refCnt()).as("the frame's and the range's").isEqualTo(3);
    } finally {
      range.release();
    }
    assertThat(second.refCnt()).isEqualTo(2);
  }

  @Test
  void aRangeAcrossTheReadsIsMadeOfSlicesOfBoth() {
    ByteBuf range = FramePieces.retainedRange(frame, 900, 1500);
    try {
      assertThat(range).isInstanceOf(CompositeByteBuf.class);
      assertThat(bytesOf(range)).isEqualTo(Arrays.copyOfRange(bytes, 900, 2400));
      List<ByteBuffer> views = FramePieces.views(List.of(range));
      assertThat(views)
          .extracting(ByteBuffer::array)
          .containsExactly(first.array(), second.array());
      assertThat(views).extracting(ByteBuffer::remaining).containsExactly(100, 1400);
      byte[] viewed = new byte[1500];
      views.get(0).duplicate().get(viewed, 0, 100);
      views.get(1).duplicate().get(viewed, 100, 1400);
      assertThat(viewed).isEqualTo(Arrays.copyOfRange(bytes, 900, 2400));
      assertThat(first.refCnt()).as("the frame's and the range's").isEqualTo(3);
    } finally {
      range.release();
    }
    assertThat(first.refCnt()).isEqualTo(2);
    assertThat(second.refCnt()).isEqualTo(2);
  }

  private static byte[] bytesOf(ByteBuf b) {
    byte[] out = new byte[b.readableBytes()];
    b.getBytes(b.readerIndex(), out);
    return out;
  }
}
