package io.yarpc.transport.tchannel.internal;

import static io.yarpc.transport.tchannel.internal.SpecVectors.CALL_REQ;
import static io.yarpc.transport.tchannel.internal.SpecVectors.CALL_RES;
import static io.yarpc.transport.tchannel.internal.SpecVectors.FRAGMENT_1;
import static io.yarpc.transport.tchannel.internal.SpecVectors.FRAGMENT_2;
import static io.yarpc.transport.tchannel.internal.SpecVectors.FRAGMENT_3;
import static io.yarpc.transport.tchannel.internal.SpecVectors.INIT_REQ;
import static io.yarpc.transport.tchannel.internal.SpecVectors.INIT_RES;
import static io.yarpc.transport.tchannel.internal.SpecVectors.SLOW_CALL_REQ;
import static io.yarpc.transport.tchannel.internal.SpecVectors.TIMEOUT_ERROR;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.yarpc.transport.Body;
import io.yarpc.transport.tchannel.ChecksumType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The codec against the byte-exact frames of docs/spec/wire-tchannel.md §15, decoding and encoding. */
class FrameCodecTest {
  private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;

  private static byte[] bytes(ByteBuf frame) {
    return ByteBufUtil.getBytes(frame);
  }

  private static byte[] slice(byte[] b, int from, int to) {
    return Arrays.copyOfRange(b, from, to);
  }

  private static void releaseAll(List<ByteBuf> frames) {
    frames.forEach(ByteBuf::release);
  }

  // ---- §15.1 init frames
  // -------------------------------------------------------------------------

  @Test
  void decodesInitReq() throws Exception {
    InitFrames.Init init = InitFrames.decode(Unpooled.wrappedBuffer(INIT_REQ));
    assertThat(Frames.type(Unpooled.wrappedBuffer(INIT_REQ))).isEqualTo(Frames.INIT_REQ);
    assertThat(Frames.id(Unpooled.wrappedBuffer(INIT_REQ))).isEqualTo(1);
    assertThat(init.version()).isEqualTo(2);
    assertThat(init.headers())
        .containsExactly(
            Map.entry("host_port", "0.0.0.0:0"),
            Map.entry("process_name", "node[25829]"),
            Map.entry("tchannel_language", "node"),
            Map.entry("tchannel_language_version", "20.20.2"),
            Map.entry("tchannel_version", "4.0.1"));
  }

  @Test
  void encodesInitReqAndRes() throws Exception {
    Map<String, String> req = InitFrames.decode(Unpooled.wrappedBuffer(INIT_REQ)).headers();
    ByteBuf encoded = InitFrames.encode(ALLOC, Frames.INIT_REQ, 1, req);
    try {
      assertThat(bytes(encoded)).isEqualTo(INIT_REQ);
    } finally {
      encoded.release();
    }
    InitFrames.Init res = InitFrames.decode(Unpooled.wrappedBuffer(INIT_RES));
    assertThat(res.headers()).containsEntry("host_port", "127.0.0.1:40451").hasSize(5);
    ByteBuf encodedRes = InitFrames.encode(ALLOC, Frames.INIT_RES, 1, res.headers());
    try {
      assertThat(bytes(encodedRes)).isEqualTo(INIT_RES);
    } finally {
      encodedRes.release();
    }
  }

  // ---- §15.1 call req and call res
  // ----------------------------------------------------------------

  private static byte[] tracing() {
    return slice(CALL_REQ, 21, 46);
  }

  private static Map<String, String> nodeClientHeaders() {
    Map<String, String> h = new LinkedHashMap<>();
    h.put("as", "raw");
    h.put("cn", "java-test");
    h.put("re", "c");
    return h;
  }

  private static byte[] callReqFields(
      long ttl, byte[] tracing, String service, Map<String, String> headers) {
    ByteBuf f = Unpooled.buffer();
    f.writeInt((int) ttl);
    f.writeBytes(tracing);
    f.writeByte(service.length());
    f.writeBytes(service.getBytes(UTF_8));
    f.writeBytes(TransportHeaders.encode(headers));
    return ByteBufUtil.getBytes(f);
  }

  @Test
  void decodesCallReq() throws Exception {
    ByteBuf frame = Unpooled.wrappedBuffer(CALL_REQ);
    CallFrame f = CallFrame.parse(frame);
    assertThat(f.type()).isEqualTo(Frames.CALL_REQ);
    assertThat(f.id()).isEqualTo(2);
    assertThat(f.moreFragments()).isFalse();
    assertThat(f.ttl()).isEqualTo(1430);
    assertThat(f.tracing()).isEqualTo(tracing());
    assertThat(f.service()).isEqualTo("echo-svc");
    assertThat(f.headers())
        .containsExactly(
            Map.entry("as", "raw"), Map.entry("cn", "java-test"), Map.entry("re", "c"));
    assertThat(f.checksumType()).isEqualTo(ChecksumType.CRC32C);
    assertThat(f.checksum()).isEqualTo(0x24032b9c);
    assertThat(f.chunkCount()).isEqualTo(3);

    MessageAssembler a = new MessageAssembler(true, f.checksumType(), 1 << 20);
    assertThat(a.add(f)).as("a single last frame completes the message").isTrue();
    assertThat(new String(a.argBytes(0), UTF_8)).isEqualTo("echo");
    assertThat(new String(a.argBytes(1), UTF_8)).isEqualTo("hdr");
    Body body = a.takeBody();
    a.release();
    assertThat(body.hasByteAccess()).isTrue();
    assertThat(new String(body.toByteArray(), UTF_8)).isEqualTo("hello");
    body.release();
    assertThat(frame.refCnt()).as("every slice of the frame was released").isEqualTo(1);
  }

  @Test
  void encodesCallReq() {
    byte[] fields = callReqFields(1430, tracing(), "echo-svc", nodeClientHeaders());
    List<ByteBuf> frames =
        MessageWriter.write(
            ALLOC,
            Frames.CALL_REQ,
            2,
            fields,
            ChecksumType.CRC32C,
            Unpooled.wrappedBuffer("echo".getBytes(UTF_8)),
            Unpooled.wrappedBuffer("hdr".getBytes(UTF_8)),
            Unpooled.wrappedBuffer("hello".getBytes(UTF_8)),
            Frames.MAX_FRAME_SIZE);
    try {
      assertThat(frames).hasSize(1);
      assertThat(bytes(frames.get(0))).isEqualTo(CALL_REQ);
    } finally {
      releaseAll(frames);
    }
  }

  @Test
  void decodesCallRes() throws Exception {
    CallFrame f = CallFrame.parse(Unpooled.wrappedBuffer(CALL_RES));
    assertThat(f.type()).isEqualTo(Frames.CALL_RES);
    assertThat(f.id()).isEqualTo(2);
    assertThat(f.code()).isZero();
    assertThat(f.tracing()).isEqualTo(tracing());
    assertThat(f.headers()).containsExactly(Map.entry("as", "raw"));
    assertThat(f.checksumType()).isEqualTo(ChecksumType.CRC32C);
    assertThat(f.checksum()).isEqualTo(0x746c490f);
    MessageAssembler a = new MessageAssembler(false, f.checksumType(), 1 << 20);
    assertThat(a.add(f)).isTrue();
    assertThat(a.argBytes(0)).isEmpty();
    assertThat(new String(a.argBytes(1), UTF_8)).isEqualTo("hdr");
    assertThat(new String(a.argBytes(2), UTF_8)).isEqualTo("hello");
    a.release();
  }

  @Test
  void encodesCallRes() {
    ByteBuf fields = Unpooled.buffer();
    fields.writeByte(0);
    fields.writeBytes(tracing());
    fields.writeBytes(TransportHeaders.encode(Map.of("as", "raw")));
    List<ByteBuf> frames =
        MessageWriter.write(
            ALLOC,
            Frames.CALL_RES,
            2,
            ByteBufUtil.getBytes(fields),
            ChecksumType.CRC32C,
            Unpooled.EMPTY_BUFFER,
            Unpooled.wrappedBuffer("hdr".getBytes(UTF_8)),
            Unpooled.wrappedBuffer("hello".getBytes(UTF_8)),
            Frames.MAX_FRAME_SIZE);
    try {
      assertThat(frames).hasSize(1);
      assertThat(bytes(frames.get(0))).isEqualTo(CALL_RES);
    } finally {
      releaseAll(frames);
    }
  }

  // ---- §15.3 error frame and a call req with no checksum and an empty arg2
  // -------------------------

  @Test
  void decodesAndEncodesSlowCallReq() throws Exception {
    CallFrame f = CallFrame.parse(Unpooled.wrappedBuffer(SLOW_CALL_REQ));
    assertThat(f.ttl()).isEqualTo(188);
    assertThat(f.checksumType()).isEqualTo(ChecksumType.NONE);
    assertThat(f.chunkCount()).isEqualTo(3);
    assertThat(f.chunkLength(1)).as("empty arg2 written as 00 00").isZero();
    byte[] fields =
        callReqFields(188, slice(SLOW_CALL_REQ, 21, 46), "echo-svc", nodeClientHeaders());
    List<ByteBuf> frames =
        MessageWriter.write(
            ALLOC,
            Frames.CALL_REQ,
            2,
            fields,
            ChecksumType.NONE,
            Unpooled.wrappedBuffer("slow".getBytes(UTF_8)),
            Unpooled.EMPTY_BUFFER,
            Unpooled.wrappedBuffer("zz".getBytes(UTF_8)),
            Frames.MAX_FRAME_SIZE);
    try {
      assertThat(bytes(frames.get(0))).isEqualTo(SLOW_CALL_REQ);
    } finally {
      releaseAll(frames);
    }
  }

  @Test
  void encodesAndDecodesErrorFrame() {
    byte[] tracing = slice(TIMEOUT_ERROR, 17, 42);
    ByteBuf frame =
        Frames.error(
            ALLOC,
            2,
            ErrorCodes.TIMEOUT,
            tracing,
            "request timed out after 188ms (limit was 188ms)");
    try {
      assertThat(bytes(frame)).isEqualTo(TIMEOUT_ERROR);
    } finally {
      frame.release();
    }
    ByteBuf in = Unpooled.wrappedBuffer(TIMEOUT_ERROR);
    assertThat(Frames.type(in)).isEqualTo(Frames.ERROR);
    assertThat(Frames.id(in)).isEqualTo(2);
    assertThat((int) in.getUnsignedByte(16)).isEqualTo(ErrorCodes.TIMEOUT);
    assertThat(ErrorCodes.toCode(in.getUnsignedByte(16)))
        .isEqualTo(io.yarpc.errors.Code.DEADLINE_EXCEEDED);
    assertThat(in.toString(44, in.getUnsignedShort(42), UTF_8))
        .isEqualTo("request timed out after 188ms (limit was 188ms)");
  }

  @Test
  void anErrorMessageLongerThanAFrameIsCutBetweenCharacters() {
    String message = "é".repeat(40_000); // 80,000 bytes
    ByteBuf frame = Frames.error(ALLOC, 3, ErrorCodes.UNEXPECTED, null, message);
    try {
      assertThat(frame.readableBytes()).isLessThanOrEqualTo(Frames.MAX_FRAME_SIZE);
      String got = frame.toString(44, frame.getUnsignedShort(42), UTF_8);
      assertThat(got).endsWith(" (truncated)").doesNotContain("\uFFFD");
      assertThat(message).startsWith(got.substring(0, got.length() - " (truncated)".length()));
      assertThat(frame.getUnsignedShort(0))
          .isEqualTo(frame.readableBytes()); // the size field still matches
    } finally {
      frame.release();
    }
  }

  // ---- §15.4 three-frame fragmentation
  // -------------------------------------------------------------

  @Test
  void decodesFragmentationVector() throws Exception {
    List<ByteBuf> frames =
        List.of(
            Unpooled.wrappedBuffer(FRAGMENT_1),
            Unpooled.wrappedBuffer(FRAGMENT_2),
            Unpooled.wrappedBuffer(FRAGMENT_3));
    CallFrame first = CallFrame.parse(frames.get(0));
    assertThat(first.moreFragments()).isTrue();
    assertThat(first.ttl()).isEqualTo(1000);
    assertThat(first.headers()).containsEntry("cn", "rawprobe");
    MessageAssembler a = new MessageAssembler(true, first.checksumType(), 1 << 20);
    assertThat(a.add(first)).isFalse();
    CallFrame second = CallFrame.parse(frames.get(1));
    assertThat(second.type()).isEqualTo(Frames.CALL_REQ_CONTINUE);
    assertThat(a.add(second)).isFalse();
    CallFrame third = CallFrame.parse(frames.get(2));
    assertThat(third.chunkLength(0)).as("the zero-length chunk closing arg2").isZero();
    assertThat(a.add(third)).isTrue();
    assertThat(new String(a.argBytes(0), UTF_8)).isEqualTo("echo");
    assertThat(new String(a.argBytes(1), UTF_8)).isEqualTo("hdr-bytes");
    assertThat(new String(a.argBytes(2), UTF_8)).isEqualTo("hello");
    a.release();
  }

  @Test
  void withoutTheZeroLengthMarkerArg2SwallowsArg3() throws Exception {
    // Frame 3 without its 00 00 chunk: [echo, hd | more] [r-bytes | more] [hello | last]
    // (docs/spec/wire-tchannel.md §6.2).
    ByteBuf third = Unpooled.buffer();
    third.writeBytes(FRAGMENT_3, 0, 16);
    third.setShort(0, FRAGMENT_3.length - 2);
    third.writeByte(0);
    third.writeByte(ChecksumType.CRC32C.code());
    third.writeInt(
        0xbcfd9016); // crc32c("echohdr-byteshello") is unchanged: the marker adds no bytes
    third.writeShort(5).writeBytes("hello".getBytes(UTF_8));
    MessageAssembler a = new MessageAssembler(true, ChecksumType.CRC32C, 1 << 20);
    a.add(CallFrame.parse(Unpooled.wrappedBuffer(FRAGMENT_1)));
    a.add(CallFrame.parse(Unpooled.wrappedBuffer(FRAGMENT_2)));
    assertThatThrownBy(() -> a.add(CallFrame.parse(third)))
        .isInstanceOf(ProtocolException.class)
        .hasMessageContaining("ended after 2 of its 3 args");
    a.release();
  }

  @Test
  void encodesFragmentationVectorFrameByFrame() {
    byte[] fields = slice(FRAGMENT_1, 17, 75);
    ByteBuf[] args = {
      Unpooled.wrappedBuffer("echo".getBytes(UTF_8)),
      Unpooled.wrappedBuffer("hdr-bytes".getBytes(UTF_8)),
      Unpooled.wrappedBuffer("hello".getBytes(UTF_8))
    };
    List<List<MessageWriter.Chunk>> plan =
        List.of(
            List.of(new MessageWriter.Chunk(0, 0, 4), new MessageWriter.Chunk(1, 0, 2)),
            List.of(new MessageWriter.Chunk(1, 2, 7)),
            List.of(new MessageWriter.Chunk(1, 9, 0), new MessageWriter.Chunk(2, 0, 5)));
    List<ByteBuf> frames =
        MessageWriter.writePlanned(
            ALLOC, Frames.CALL_REQ, 2, fields, ChecksumType.CRC32C, args, plan);
    try {
      assertThat(frames).hasSize(3);
      assertThat(bytes(frames.get(0))).isEqualTo(FRAGMENT_1);
      assertThat(bytes(frames.get(1))).isEqualTo(FRAGMENT_2);
      assertThat(bytes(frames.get(2))).isEqualTo(FRAGMENT_3);
    } finally {
      releaseAll(frames);
    }
  }

  /** With a 90-byte frame limit the writer fills frame 1 exactly like the vector, then stops splitting early. */
  @Test
  void writerFillsFramesInsteadOfSplittingEarly() throws Exception {
    byte[] fields = slice(FRAGMENT_1, 17, 75);
    List<ByteBuf> frames =
        MessageWriter.write(
            ALLOC,
            Frames.CALL_REQ,
            2,
            fields,
            ChecksumType.CRC32C,
            Unpooled.wrappedBuffer("echo".getBytes(UTF_8)),
            Unpooled.wrappedBuffer("hdr-bytes".getBytes(UTF_8)),
            Unpooled.wrappedBuffer("hello".getBytes(UTF_8)),
            90);
    try {
      assertThat(frames).hasSize(2);
      assertThat(bytes(frames.get(0))).isEqualTo(FRAGMENT_1);
      CallFrame second = CallFrame.parse(frames.get(1));
      assertThat(second.moreFragments()).isFalse();
      assertThat(second.chunkCount()).isEqualTo(2);
      assertThat(second.chunkLength(0)).isEqualTo(7);
      assertThat(second.chunkLength(1)).isEqualTo(5);
      assertThat(second.checksum()).isEqualTo(0xbcfd9016);
    } finally {
      releaseAll(frames);
    }
  }

  // ---- frame decoder
  // --------------------------------------------------------------------------------

  @Test
  void frameDecoderCutsFramesFromAnyChunking() {
    EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder());
    byte[] stream = new byte[INIT_REQ.length + CALL_REQ.length];
    System.arraycopy(INIT_REQ, 0, stream, 0, INIT_REQ.length);
    System.arraycopy(CALL_REQ, 0, stream, INIT_REQ.length, CALL_REQ.length);
    for (byte b : stream) {
      ch.writeInbound(Unpooled.wrappedBuffer(new byte[] {b}));
    }
    List<byte[]> frames = new ArrayList<>();
    for (ByteBuf f; (f = ch.readInbound()) != null; ) {
      frames.add(bytes(f));
      f.release();
    }
    assertThat(frames).containsExactly(INIT_REQ, CALL_REQ);
    assertThat(ch.finish()).isFalse();
  }

  /**
   * Large reads that large frames span (as a 1 MiB message's 64 KiB frames do): each frame is a view of
   * the read buffers it lies in, not a copy, and a read is let go by the decoder as soon as its bytes are
   * consumed, so a held frame pins only its own reads. (The arrays alone would not tell a view of the reads
   * from a slice of the decoder's composite cumulation; the reference counts do.)
   */
  @Test
  void frameDecoderHandsOnLargeFramesAcrossReadsWithoutACopyAndLetsConsumedReadsGo() {
    // frames X (small, so the first read is partly consumed when the second arrives), A, B, C
    int[] frameEnds = {100, 20_100, 50_100, 70_100};
    byte[] stream = stream(frameEnds);
    int[] readEnds = {12_000, 45_000, 70_100}; // A spans reads 1-2, B reads 2-3, C is in read 3
    List<ByteBuf> reads = reads(stream, readEnds);
    EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder());
    List<ByteBuf> frames = decode(ch, reads);
    try {
      assertThat(frames).hasSize(4);
      assertFrames(frames, stream, frameEnds);
      assertThat(arrays(frames.get(0))).containsExactly(reads.get(0).array());
      assertThat(arrays(frames.get(1)))
          .as("A: the first two reads' own arrays")
          .containsExactly(reads.get(0).array(), reads.get(1).array());
      assertThat(arrays(frames.get(2))).containsExactly(reads.get(1).array(), reads.get(2).array());
      assertThat(arrays(frames.get(3))).containsExactly(reads.get(2).array());
      assertThat(reads.get(0).refCnt()).as("read 1: the test's, X's and A's").isEqualTo(3);
      frames.remove(0).release();
      frames.remove(0).release();
      assertThat(reads.get(0).refCnt()).as("the decoder let read 1 go").isEqualTo(1);
      releaseFramesThenAssertOnlyTheTestHoldsTheReads(ch, frames, reads);
    } finally {
      releaseAll(frames); // those not released yet (a failed assertion)
      releaseAll(reads);
    }
  }

  /**
   * A small frame across reads is merged into one buffer with the read, as Netty's cumulation does (a
   * composite per small frame would cost more than the copy), also right after a large frame left the
   * cumulation a composite.
   */
  @Test
  void frameDecoderMergesSmallFramesAcrossReads() {
    // P and Q small; A large; S small, then T small
    int[] frameEnds = {1000, 2000, 22_000, 22_700, 23_400};
    byte[] stream = stream(frameEnds);
    // Q spans reads 1-2; A spans reads 2-3 (composite cumulation); S spans reads 3-4
    int[] readEnds = {1500, 12_000, 22_300, 23_400};
    List<ByteBuf> reads = reads(stream, readEnds);
    EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder());
    List<ByteBuf> frames = decode(ch, reads);
    try {
      assertThat(frames).hasSize(5);
      assertFrames(frames, stream, frameEnds);
      assertThat(frames.get(1)).as("Q, merged").isNotInstanceOf(CompositeByteBuf.class);
      assertThat(frames.get(2)).as("A, composed").isInstanceOf(CompositeByteBuf.class);
      assertThat(frames.get(3)).as("S, merged").isNotInstanceOf(CompositeByteBuf.class);
      ByteBuf s = frames.get(3);
      assertThat(s.hasArray() ? s.array() : null) // the decoder's allocator may merge into direct
          .as("a copy")
          .isNotSameAs(reads.get(2).array())
          .isNotSameAs(reads.get(3).array());
      releaseFramesThenAssertOnlyTheTestHoldsTheReads(ch, frames, reads);
    } finally {
      releaseAll(frames); // those not released yet (a failed assertion)
      releaseAll(reads);
    }
  }

  private static void releaseFramesThenAssertOnlyTheTestHoldsTheReads(
      EmbeddedChannel ch, List<ByteBuf> frames, List<ByteBuf> reads) {
    releaseAll(frames);
    frames.clear();
    assertThat(ch.finish()).isFalse();
    for (ByteBuf read : reads) {
      assertThat(read.refCnt()).as("only the test holds each read").isEqualTo(1);
    }
  }

  /** Random bytes with a frame size field at the start of each frame ending at {@code frameEnds}. */
  private static byte[] stream(int[] frameEnds) {
    byte[] stream = new byte[frameEnds[frameEnds.length - 1]];
    new Random(5).nextBytes(stream);
    for (int start = 0, i = 0; i < frameEnds.length; start = frameEnds[i++]) {
      stream[start] = (byte) ((frameEnds[i] - start) >> 8);
      stream[start + 1] = (byte) (frameEnds[i] - start);
    }
    return stream;
  }

  /** The stream cut at {@code readEnds}, each read retained once more for the test. */
  private static List<ByteBuf> reads(byte[] stream, int[] readEnds) {
    List<ByteBuf> reads = new ArrayList<>();
    for (int start = 0, i = 0; i < readEnds.length; start = readEnds[i++]) {
      reads.add(Unpooled.wrappedBuffer(Arrays.copyOfRange(stream, start, readEnds[i])).retain());
    }
    return reads;
  }

  private static List<ByteBuf> decode(EmbeddedChannel ch, List<ByteBuf> reads) {
    List<ByteBuf> frames = new ArrayList<>();
    for (ByteBuf read : reads) {
      ch.writeInbound(read);
      for (ByteBuf f; (f = ch.readInbound()) != null; ) {
        frames.add(f);
      }
    }
    return frames;
  }

  private static void assertFrames(List<ByteBuf> frames, byte[] stream, int[] frameEnds) {
    for (int start = 0, i = 0; i < frameEnds.length; start = frameEnds[i++]) {
      assertThat(bytes(frames.get(i).duplicate()))
          .as("frame %d", i)
          .isEqualTo(Arrays.copyOfRange(stream, start, frameEnds[i]));
    }
  }

  private static List<byte[]> arrays(ByteBuf frame) {
    List<byte[]> arrays = new ArrayList<>();
    for (java.nio.ByteBuffer b : frame.nioBuffers()) {
      arrays.add(b.array());
    }
    return arrays;
  }

  @Test
  void frameDecoderStopsAtAnImpossibleSize() {
    EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder());
    ch.writeInbound(
        Unpooled.wrappedBuffer(new byte[] {0, 15, 1, 0}), Unpooled.wrappedBuffer(CALL_REQ));
    Object first = ch.readInbound();
    assertThat(first).isEqualTo(new FrameDecoder.BadFrameSize(15));
    Object next = ch.readInbound();
    assertThat(next).as("nothing decoded after a bad size").isNull();
    ch.finish();
  }
}
