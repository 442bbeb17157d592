package io.yarpc.netty.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.ByteArrayOutputStream;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * What a frame decoder's cumulation does with each read while a partial frame is pending: a large
 * read is appended without a copy, a small one merged, a composite with a small rest flattened again; and
 * every read is released or owned by the result, whatever happens.
 */
class FrameCumulatorTest {
  private final ByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
  private final FrameCumulator cumulator = FrameCumulator.INSTANCE;
  private final Random random = new Random(3);
  private final ByteArrayOutputStream expected = new ByteArrayOutputStream();

  @Test
  void withNothingPendingTheReadItselfIsTheCumulation() {
    ByteBuf empty = read(0);
    ByteBuf in = read(100);
    ByteBuf c = cumulator.cumulate(alloc, empty, in);
    assertThat(c).isSameAs(in);
    assertThat(empty.refCnt()).isZero();
    c.release();
  }

  @Test
  void aLargeReadIsAppendedWithoutACopy() {
    ByteBuf pending = read(700);
    ByteBuf big = read(FrameCumulator.COMPOSE_MIN);
    assumeTrue(big.hasMemoryAddress(), "Netty runs without Unsafe here");
    long bigAddress = big.memoryAddress() + big.readerIndex();
    ByteBuf c = cumulator.cumulate(alloc, pending, big);
    assertThat(c).isInstanceOf(CompositeByteBuf.class);
    CompositeByteBuf composite = (CompositeByteBuf) c;
    assertThat(composite.numComponents()).isEqualTo(2);
    ByteBuf second = composite.internalComponent(1);
    assertThat(second.memoryAddress() + second.readerIndex())
        .as("the read's own memory, not a copy")
        .isEqualTo(bigAddress);
    assertWholeAndRelease(c, pending, big);
  }

  @Test
  void aSmallReadIsMergedIntoAPlainCumulation() {
    ByteBuf pending = read(700);
    ByteBuf small = read(FrameCumulator.COMPOSE_MIN - 1);
    ByteBuf c = cumulator.cumulate(alloc, pending, small);
    assertThat(c).isNotInstanceOf(CompositeByteBuf.class);
    assertThat(small.refCnt()).as("copied and released").isZero();
    assertWholeAndRelease(c, pending);
  }

  @Test
  void aCompositeKeepsTakingReadsWhileItsRestIsLarge() {
    ByteBuf c = cumulator.cumulate(alloc, read(100), read(20_000));
    ByteBuf small = read(10);
    c = cumulator.cumulate(alloc, c, small);
    assertThat(c).isInstanceOf(CompositeByteBuf.class);
    assertThat(((CompositeByteBuf) c).numComponents()).isEqualTo(3);
    assertThat(small.refCnt()).as("owned by the composite").isEqualTo(1);
    assertWholeAndRelease(c);
  }

  @Test
  void aCompositeWithASmallRestGoesBackToOneBuffer() {
    ByteBuf composite = cumulator.cumulate(alloc, read(100), read(20_000));
    composite.skipBytes(20_100 - 50); // the decoder consumed all but 50 bytes
    expected.reset();
    expected.writeBytes(ByteBufUtil.getBytes(composite));
    ByteBuf small = read(30);
    ByteBuf c = cumulator.cumulate(alloc, composite, small);
    assertThat(c).isNotInstanceOf(CompositeByteBuf.class);
    assertThat(composite.refCnt()).isZero();
    assertThat(small.refCnt()).isZero();
    assertWholeAndRelease(c);
  }

  @Test
  void aFrameTrickledByteByByteKeepsTheCompositeSmall() {
    ByteBuf c = cumulator.cumulate(alloc, read(100), read(20_000)); // a large unread rest
    for (int i = 0; i < 20_000; i++) {
      c = cumulator.cumulate(alloc, c, read(1));
      if (c instanceof CompositeByteBuf composite) {
        assertThat(composite.numComponents()).isLessThanOrEqualTo(FrameCumulator.MAX_COMPONENTS);
      }
    }
    assertWholeAndRelease(c);
  }

  @Test
  void aSharedCompositeIsCopiedNotChanged() {
    ByteBuf composite = cumulator.cumulate(alloc, read(100), read(20_000));
    composite.skipBytes(20_100 - 50);
    expected.reset();
    expected.writeBytes(ByteBufUtil.getBytes(composite));
    ByteBuf slice = composite.retainedSlice(); // a frame someone kept
    ByteBuf c = cumulator.cumulate(alloc, composite, read(30));
    assertThat(c).isNotSameAs(composite);
    assertThat(slice.readableBytes()).as("the kept slice is untouched").isEqualTo(50);
    assertThat(composite.refCnt()).as("only the slice holds it now").isEqualTo(1);
    slice.release();
    assertThat(composite.refCnt()).isZero();
    assertWholeAndRelease(c);
  }

  @Test
  void theCumulationItselfAsTheReadIsReleasedOnce() {
    ByteBuf c = read(100);
    c.retain(); // as the decoder hands it in twice
    ByteBuf result = cumulator.cumulate(alloc, c, c);
    assertThat(result).isSameAs(c);
    assertWholeAndRelease(result);
  }

  @Test
  void aFailedFlattenReleasesTheReadAndKeepsTheCumulation() {
    ByteBuf composite = cumulator.cumulate(alloc, read(100), read(20_000));
    composite.skipBytes(20_000);
    ByteBuf small = read(30);
    ByteBufAllocator exhausted =
        new AbstractByteBufAllocator() {
          @Override
          protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
            throw new OutOfMemoryError("test: no memory");
          }

          @Override
          protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
            throw new OutOfMemoryError("test: no memory");
          }

          @Override
          public boolean isDirectBufferPooled() {
            return false;
          }
        };
    assertThatThrownBy(() -> cumulator.cumulate(exhausted, composite, small))
        .isInstanceOf(OutOfMemoryError.class);
    assertThat(small.refCnt()).as("the read is released").isZero();
    assertThat(composite.refCnt()).as("the decoder still owns its cumulation").isEqualTo(1);
    assertThat(composite.readableBytes()).isEqualTo(100);
    composite.release();
  }

  /** A direct read of {@code n} random bytes, remembered as expected output. */
  private ByteBuf read(int n) {
    byte[] bytes = new byte[n];
    random.nextBytes(bytes);
    expected.writeBytes(bytes);
    return alloc.directBuffer(n).writeBytes(bytes);
  }

  private void assertWholeAndRelease(ByteBuf c, ByteBuf... reads) {
    assertThat(ByteBufUtil.getBytes(c)).isEqualTo(expected.toByteArray());
    c.release();
    assertThat(c.refCnt()).isZero();
    for (ByteBuf r : reads) {
      assertThat(r.refCnt()).as("every read released with the cumulation").isZero();
    }
  }
}
