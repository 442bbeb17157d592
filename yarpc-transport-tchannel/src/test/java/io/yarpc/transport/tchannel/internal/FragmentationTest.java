package io.yarpc.transport.tchannel.internal;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.tchannel.ChecksumType;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The writer rules of docs/spec/wire-tchannel.md §6.3 and the reader algorithm of §6.2, over many arg sizes and
 * small frame limits so that every boundary case (an arg ending exactly at, or within two bytes of, the
 * end of a frame) occurs.
 */
class FragmentationTest {
  private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;
  private static final byte[] FIELDS = new byte[4 + Frames.TRACING_SIZE + 1 + 3 + 1];

  static {
    FIELDS[3] = 100; // ttl
    FIELDS[4 + Frames.TRACING_SIZE] = 3; // service "svc"
    System.arraycopy("svc".getBytes(UTF_8), 0, FIELDS, 4 + Frames.TRACING_SIZE + 1, 3);
  }

  private static byte[] random(int size, long seed) {
    byte[] b = new byte[size];
    new Random(seed).nextBytes(b);
    return b;
  }

  /** Writes, checks the rules frame by frame, reads back; returns the frames' chunk layouts. */
  private static List<int[]> roundTrip(
      byte[] arg1, byte[] arg2, byte[] arg3, int maxFrame, ChecksumType type) throws Exception {
    List<ByteBuf> frames =
        MessageWriter.write(
            ALLOC,
            Frames.CALL_REQ,
            7,
            FIELDS,
            type,
            Unpooled.wrappedBuffer(arg1),
            Unpooled.wrappedBuffer(arg2),
            Unpooled.wrappedBuffer(arg3),
            maxFrame);
    List<int[]> layouts = new ArrayList<>();
    MessageAssembler a = new MessageAssembler(true, type, 1 << 24);
    try {
      for (int i = 0; i < frames.size(); i++) {
        ByteBuf frame = frames.get(i);
        int size = frame.readableBytes();
        assertThat(frame.getUnsignedShort(frame.readerIndex())).as("size field").isEqualTo(size);
        assertThat(size).as("frame %d size", i).isLessThanOrEqualTo(maxFrame);
        CallFrame f = CallFrame.parse(frame);
        boolean last = i == frames.size() - 1;
        assertThat(f.moreFragments()).as("more flag of frame %d", i).isEqualTo(!last);
        assertThat(f.flags() & 0x02).as("streaming flag").isZero();
        assertThat(f.type()).isEqualTo(i == 0 ? Frames.CALL_REQ : Frames.CALL_REQ_CONTINUE);
        assertThat(f.checksumType()).isEqualTo(type);
        if (!last) {
          assertThat(size)
              .as("frame %d is split only when (nearly) full", i)
              .isGreaterThanOrEqualTo(maxFrame - 2);
        }
        if (i == 0) {
          assertThat(f.chunkCount())
              .as("arg1 and the start of arg2 in the first frame")
              .isGreaterThanOrEqualTo(2);
          assertThat(f.chunkLength(0)).as("arg1 whole in the first frame").isEqualTo(arg1.length);
        }
        int[] layout = new int[f.chunkCount()];
        for (int c = 0; c < f.chunkCount(); c++) {
          layout[c] = f.chunkLength(c);
        }
        layouts.add(layout);
        boolean complete = a.add(f);
        assertThat(complete).isEqualTo(last);
      }
      assertThat(a.argBytes(0)).isEqualTo(arg1);
      assertThat(a.argBytes(1)).isEqualTo(arg2);
      Body body = a.takeBody();
      assertThat(body.toByteArray()).isEqualTo(arg3);
      body.release();
    } finally {
      a.release();
      frames.forEach(ByteBuf::release);
    }
    return layouts;
  }

  @ParameterizedTest
  @EnumSource(value = ChecksumType.class, names = "FARMHASH", mode = EnumSource.Mode.EXCLUDE)
  void everyBoundaryRoundTrips(ChecksumType type) throws Exception {
    // With 128-byte frames, arg2 from 0 to 260 bytes ends at every offset of the first three
    // frames; each is paired with two arg3 sizes that vary with it (including empty and
    // frame-filling ones).
    int maxFrame = 128;
    byte[] arg1 = "proc".getBytes(UTF_8);
    int[] arg3Sizes = {0, 1, 2, 3, 97, 98, 99, 100, 101, 102, 103, 250, 1000};
    for (int arg2 = 0; arg2 <= 260; arg2++) {
      for (int k = 0; k < 2; k++) {
        int arg3 = arg3Sizes[(arg2 * 2 + k) % arg3Sizes.length];
        roundTrip(arg1, random(arg2, arg2), random(arg3, arg3 + 1000L), maxFrame, type);
      }
    }
  }

  @Test
  void argEndingAtAFrameBoundaryIsClosedByAZeroLengthChunk() throws Exception {
    ChecksumType type = ChecksumType.CRC32;
    int overhead = Frames.HEADER_SIZE + 1 + FIELDS.length + 1 + 4;
    int maxFrame = 300;
    byte[] arg1 = "proc".getBytes(UTF_8);
    // arg2 fills the first frame to the last byte, then to within 1 and 2 bytes of it.
    for (int spare = 0; spare <= 2; spare++) {
      int arg2 = maxFrame - overhead - (2 + arg1.length) - 2 - spare;
      List<int[]> layouts =
          roundTrip(arg1, random(arg2, 1), "body".getBytes(UTF_8), maxFrame, type);
      assertThat(layouts).as("spare %d", spare).hasSize(2);
      assertThat(layouts.get(0)).containsExactly(arg1.length, arg2);
      assertThat(layouts.get(1)).as("zero-length chunk, then arg3").containsExactly(0, 4);
    }
    // With 3 spare bytes arg3 starts in the first frame: its chunk header and one byte.
    int arg2 = maxFrame - overhead - (2 + arg1.length) - 2 - 3;
    List<int[]> layouts = roundTrip(arg1, random(arg2, 1), "body".getBytes(UTF_8), maxFrame, type);
    assertThat(layouts.get(0)).containsExactly(arg1.length, arg2, 1);
    assertThat(layouts.get(1)).containsExactly(3);
  }

  @Test
  void emptyArgsAreAlwaysWritten() throws Exception {
    List<int[]> layouts =
        roundTrip(
            "p".getBytes(UTF_8),
            new byte[0],
            new byte[0],
            Frames.MAX_FRAME_SIZE,
            ChecksumType.NONE);
    assertThat(layouts).hasSize(1);
    assertThat(layouts.get(0)).containsExactly(1, 0, 0);
  }

  @Test
  void fullSizeFramesFor70000Bytes() throws Exception {
    List<int[]> layouts =
        roundTrip(
            "echo".getBytes(UTF_8),
            new byte[] {0, 0},
            random(70_000, 3),
            Frames.MAX_FRAME_SIZE,
            ChecksumType.CRC32);
    assertThat(layouts).hasSize(2);
  }

  @Test
  void arg1MustFitInTheFirstFrame() {
    assertThatThrownBy(
            () ->
                MessageWriter.write(
                    ALLOC,
                    Frames.CALL_REQ,
                    1,
                    FIELDS,
                    ChecksumType.NONE,
                    Unpooled.wrappedBuffer(new byte[300]),
                    Unpooled.EMPTY_BUFFER,
                    Unpooled.EMPTY_BUFFER,
                    300))
        .isInstanceOfSatisfying(
            YarpcException.class, e -> assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT));
  }

  @Test
  void largeArg3ChunksAreReferencedNotCopied() {
    byte[] body = random(10_000, 5);
    ByteBuf arg3 = Unpooled.wrappedBuffer(body);
    List<ByteBuf> frames =
        MessageWriter.write(
            ALLOC,
            Frames.CALL_REQ,
            1,
            FIELDS,
            ChecksumType.NONE,
            Unpooled.wrappedBuffer("p".getBytes(UTF_8)),
            Unpooled.EMPTY_BUFFER,
            arg3,
            Frames.MAX_FRAME_SIZE);
    try {
      assertThat(arg3.refCnt())
          .as("the frame holds a retained slice of the body's buffer")
          .isEqualTo(2);
      assertThat(frames.get(0)).isInstanceOf(io.netty.buffer.CompositeByteBuf.class);
    } finally {
      frames.forEach(ByteBuf::release);
    }
    assertThat(arg3.refCnt()).isEqualTo(1);
    arg3.release();
  }
}
