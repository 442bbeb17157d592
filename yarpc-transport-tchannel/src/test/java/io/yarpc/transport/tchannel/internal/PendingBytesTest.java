package io.yarpc.transport.tchannel.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.yarpc.transport.tchannel.ChecksumType;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * What a connection is charged for the chunks of messages still arriving: each buffer a chunk pins counts
 * once, whole, plus an overhead per chunk; small chunks of messages that span frames are copied so they
 * pin only themselves; the shared budget adds every connection's share up and wakes waiters.
 */
class PendingBytesTest {
  private static final PooledByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;

  @Test
  void aBufferPinnedBySeveralChunksCountsOnceWhole() {
    PendingBudget budget = new PendingBudget(1 << 20);
    PendingBytes pending = new PendingBytes(budget);
    ByteBuf read = ALLOC.heapBuffer(8192).writeZero(8192);
    ByteBuf a = read.retainedSlice(0, 10);
    ByteBuf b = read.retainedSlice(100, 10);
    try {
      pending.add(a);
      long one = pending.held();
      assertThat(one).isGreaterThanOrEqualTo(8192 + PendingBytes.CHUNK_OVERHEAD);
      pending.add(b);
      assertThat(pending.held()).isEqualTo(one + PendingBytes.CHUNK_OVERHEAD);
      assertThat(budget.total()).isEqualTo(pending.held());
      pending.remove(a);
      assertThat(pending.held()).isEqualTo(one);
      pending.remove(b);
      assertThat(pending.held()).isZero();
      assertThat(budget.total()).isZero();
    } finally {
      a.release();
      b.release();
      read.release();
    }
  }

  @Test
  void aChunkOfAFrameAcrossReadsPinsEachReadUnderItOnce() {
    PendingBudget budget = new PendingBudget(1 << 20);
    PendingBytes pending = new PendingBytes(budget);
    ByteBuf first = ALLOC.heapBuffer(8192).writeZero(8192);
    ByteBuf second = ALLOC.heapBuffer(16384).writeZero(16384);
    // as the frame decoder makes it: retained slices of the reads the frame lies in
    CompositeByteBuf frame =
        ALLOC
            .compositeBuffer(2)
            .addComponent(true, first.retainedSlice(4096, 4096))
            .addComponent(true, second.retainedSlice(0, 8192));
    ByteBuf head = FramePieces.retainedRange(frame, 0, 100); // in the first read only
    ByteBuf body = FramePieces.retainedRange(frame, 100, 12_000); // across both
    ByteBuf other = second.retainedSlice(8192, 100); // the next frame, in the second read
    try {
      pending.add(head);
      long one = pending.held();
      assertThat(one)
          .as("the first read, whole")
          .isGreaterThanOrEqualTo(8192 + 64)
          .isLessThan(16384);
      pending.add(body);
      long both = pending.held();
      assertThat(both - one)
          .as("the second read, whole, once")
          .isGreaterThanOrEqualTo(16384 + PendingBytes.CHUNK_OVERHEAD)
          .isLessThan(2 * 16384);
      pending.add(other);
      assertThat(pending.held()).isEqualTo(both + PendingBytes.CHUNK_OVERHEAD);
      assertThat(budget.total()).isEqualTo(pending.held());
      pending.remove(head);
      assertThat(pending.held()).as("the body still pins the first read").isEqualTo(both);
      pending.remove(body);
      assertThat(pending.held())
          .as("the next frame's chunk still pins the second read, nothing pins the first")
          .isEqualTo(both - one);
      pending.remove(other);
      assertThat(pending.held()).isZero();
      assertThat(budget.total()).isZero();
    } finally {
      head.release();
      body.release();
      other.release();
      frame.release();
      first.release();
      second.release();
    }
    assertThat(first.refCnt()).isZero();
    assertThat(second.refCnt()).isZero();
  }

  @Test
  void aChunkOfAFrameAcrossReadsWouldPinOnlyTheReadsUnderIt() {
    ByteBuf big = ALLOC.heapBuffer(64 << 10).writeZero(64 << 10);
    ByteBuf small = ALLOC.heapBuffer(8 << 10).writeZero(8 << 10);
    CompositeByteBuf frame = // 10,000 bytes at the end of a 64 KiB read, then 8,000 of an 8 KiB one
        ALLOC
            .compositeBuffer(2)
            .addComponent(true, big.retainedSlice((64 << 10) - 10_000, 10_000))
            .addComponent(true, small.retainedSlice(0, 8000));
    try {
      assertThat(PendingBytes.wouldPinMuchMore(frame, 0, 6000))
          .as("6,000 B pinning 64 KiB")
          .isTrue();
      assertThat(PendingBytes.wouldPinMuchMore(frame, 10_000, 8000))
          .as("8,000 B pinning only the 8 KiB read, not the 72 KiB under the whole frame")
          .isFalse();
      assertThat(PendingBytes.wouldPinMuchMore(frame, 9000, 2000)).as("across both").isTrue();
    } finally {
      frame.release();
      big.release();
      small.release();
    }
  }

  @Test
  void aChunkSmallNextToItsBufferWouldPinMuchMore() {
    ByteBuf read = ALLOC.heapBuffer(64 << 10).writeZero(64 << 10);
    ByteBuf frame = read.retainedSlice(0, 20_000);
    try {
      assertThat(PendingBytes.wouldPinMuchMore(frame, 0, 100)).isTrue();
      assertThat(PendingBytes.wouldPinMuchMore(frame, 0, 4 << 10)).isTrue();
      assertThat(PendingBytes.wouldPinMuchMore(frame, 0, 8 << 10)).as("8 times itself").isFalse();
      assertThat(PendingBytes.wouldPinMuchMore(frame, 0, 16 << 10)).isFalse();
    } finally {
      frame.release();
      read.release();
    }
  }

  @Test
  void aMessageSpanningFramesKeepsSmallChunksAsCopiesAndIsChargedUntilItIsHandedOn()
      throws Exception {
    PendingBudget budget = new PendingBudget(1 << 20);
    PendingBytes pending = new PendingBytes(budget);
    // one 64 KiB socket read holding a small first frame of a message that goes on
    ByteBuf read = ALLOC.heapBuffer(64 << 10);
    read.writeShort(0)
        .writeByte(Frames.CALL_REQ)
        .writeByte(0)
        .writeInt(7)
        .writeLong(0)
        .writeByte(Frames.FLAG_MORE_FRAGMENTS)
        .writeInt(1000)
        .writeZero(Frames.TRACING_SIZE)
        .writeByte(3)
        .writeBytes("svc".getBytes(java.nio.charset.StandardCharsets.US_ASCII))
        .writeByte(0) // no transport headers
        .writeByte(0) // checksum none
        .writeShort(4)
        .writeBytes("echo".getBytes(java.nio.charset.StandardCharsets.US_ASCII))
        .writeShort(2)
        .writeShort(0)
        .writeShort(3)
        .writeBytes(new byte[] {1, 2, 3});
    read.setShort(0, read.writerIndex());
    read.writerIndex(read.capacity());
    ByteBuf frame = read.retainedSlice(0, read.getUnsignedShort(0));
    read.release();
    MessageAssembler a = new MessageAssembler(true, ChecksumType.NONE, 1 << 20, 1 << 10, pending);
    try {
      assertThat(a.add(CallFrame.parse(frame))).isFalse();
    } finally {
      frame.release();
    }
    assertThat(read.refCnt()).as("no chunk pins the 64 KiB read buffer").isZero();
    assertThat(pending.held())
        .as("three small copies and their overhead")
        .isGreaterThan(3 * PendingBytes.CHUNK_OVERHEAD)
        .isLessThan(4096);
    a.release();
    assertThat(pending.held()).isZero();
    assertThat(budget.total()).isZero();
  }

  @Test
  void aMessageCompleteInItsFirstFrameIsNeverCharged() throws Exception {
    PendingBytes pending = new PendingBytes(new PendingBudget(1 << 20));
    ByteBuf frame =
        CallCodec.encodeRequest(
                ALLOC,
                3,
                io.yarpc.transport.RequestMeta.builder()
                    .caller("c")
                    .service("svc")
                    .procedure("echo")
                    .encoding("raw")
                    .build(),
                io.yarpc.transport.Body.of(new byte[] {1, 2, 3}),
                1000,
                new byte[Frames.TRACING_SIZE],
                ChecksumType.NONE,
                Frames.MAX_FRAME_SIZE)
            .get(0);
    MessageAssembler a = new MessageAssembler(true, ChecksumType.NONE, 1 << 20, 1 << 10, pending);
    try {
      assertThat(a.add(CallFrame.parse(frame))).isTrue();
      assertThat(pending.held()).isZero();
    } finally {
      frame.release();
      a.release();
    }
  }

  @Test
  void arg2IsCheckedAgainstItsLimitAsItArrives() throws Exception {
    MessageAssembler a =
        new MessageAssembler(
            true, ChecksumType.NONE, 1 << 20, 8, new PendingBytes(PendingBudget.UNLIMITED));
    ByteBuf frame =
        ALLOC
            .buffer()
            .writeShort(0)
            .writeByte(Frames.CALL_REQ)
            .writeByte(0)
            .writeInt(9)
            .writeLong(0)
            .writeByte(Frames.FLAG_MORE_FRAGMENTS)
            .writeInt(1000)
            .writeZero(Frames.TRACING_SIZE)
            .writeByte(1)
            .writeByte('s')
            .writeByte(0)
            .writeByte(0)
            .writeShort(1)
            .writeByte('p')
            .writeShort(9)
            .writeZero(9);
    frame.setShort(0, frame.readableBytes());
    try {
      CallFrame f = CallFrame.parse(frame);
      assertThatThrownBy(() -> a.add(f))
          .isInstanceOfSatisfying(
              ProtocolException.class,
              e -> assertThat(e.errorCode()).isEqualTo(ErrorCodes.BAD_REQUEST))
          .hasMessage("the headers (arg2) of message 9 exceed the limit of 8 bytes");
    } finally {
      frame.release();
      a.release();
    }
  }

  @Test
  void theSharedBudgetWakesWaitersOnceWhenItDropsBelowItsLimit() {
    PendingBudget budget = new PendingBudget(100);
    AtomicInteger woken = new AtomicInteger();
    Runnable wake = woken::incrementAndGet;
    assertThat(budget.await(wake)).as("not exhausted: no need to wait").isFalse();
    budget.add(150);
    assertThat(budget.exhausted()).isTrue();
    assertThat(budget.await(wake)).as("the exemption is free: no need to wait").isFalse();
    Object exempt = new Object();
    assertThat(budget.tryExempt(exempt)).isTrue();
    assertThat(budget.await(wake)).isTrue();
    budget.remove(10);
    assertThat(woken).hasValue(0);
    budget.remove(60);
    assertThat(woken).hasValue(1);
    budget.remove(10);
    assertThat(woken).as("once").hasValue(1);
  }

  @Test
  void oneConnectionAtATimeIsExemptAndGivingItBackWakesTheWaiters() {
    PendingBudget budget = new PendingBudget(100);
    budget.add(150);
    Object first = new Object();
    Object second = new Object();
    AtomicInteger woken = new AtomicInteger();
    assertThat(budget.tryExempt(first)).isTrue();
    assertThat(budget.tryExempt(first)).as("held already").isTrue();
    assertThat(budget.tryExempt(second)).isFalse();
    assertThat(budget.await(woken::incrementAndGet)).isTrue();
    budget.endExempt(second);
    assertThat(woken).as("not the holder: nothing changes").hasValue(0);
    budget.endExempt(first);
    assertThat(woken).hasValue(1);
    assertThat(budget.tryExempt(second)).isTrue();
    budget.remove(150);
  }
}
