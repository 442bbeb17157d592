package io.yarpc.transport.tchannel.internal;

import static io.yarpc.transport.tchannel.internal.SpecVectors.CALL_REQ;
import static io.yarpc.transport.tchannel.internal.SpecVectors.FRAGMENT_1;
import static io.yarpc.transport.tchannel.internal.SpecVectors.FRAGMENT_2;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.yarpc.errors.Code;
import io.yarpc.transport.tchannel.ChecksumType;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Checksums (docs/spec/wire-tchannel.md §7.4 vectors), the reader's per-message checks, header maps and the error tables. */
class ChecksumAndRulesTest {
  private static int crc(ChecksumType type, String... chunks) {
    RunningChecksum c = new RunningChecksum(type);
    for (String s : chunks) {
      byte[] b = s.getBytes(UTF_8);
      c.update(Unpooled.wrappedBuffer(b), 0, b.length);
    }
    return c.value();
  }

  @Test
  void checksumVectors() {
    assertThat(crc(ChecksumType.CRC32C, "123456789")).isEqualTo(0xe3069283);
    assertThat(crc(ChecksumType.CRC32, "123456789")).isEqualTo(0xcbf43926);
    assertThat(crc(ChecksumType.CRC32C, "echo", "hdr", "hello")).isEqualTo(0x24032b9c);
    assertThat(crc(ChecksumType.CRC32, "echo", "hdr", "hello")).isEqualTo(0x89d70916);
    assertThat(crc(ChecksumType.CRC32C, "", "hdr", "hello")).isEqualTo(0x746c490f);
    assertThat(crc(ChecksumType.CRC32, "", "hdr", "hello")).isEqualTo(0xaf0df1c0);
    assertThat(crc(ChecksumType.CRC32C, "ech", "ohdr-b", "ytes", "hel", "lo"))
        .as("running across chunk splits")
        .isEqualTo(0xbcfd9016);
    assertThat(crc(ChecksumType.NONE, "anything")).isZero();
    assertThat(new RunningChecksum(ChecksumType.FARMHASH).isVerifiable()).isFalse();
  }

  @Test
  void checksumOverDirectAndCompositeBuffers() {
    ByteBuf direct = Unpooled.directBuffer().writeBytes("echohdrhello".getBytes(UTF_8));
    ByteBuf composite =
        Unpooled.wrappedBuffer(
            Unpooled.wrappedBuffer("echoh".getBytes(UTF_8)),
            Unpooled.directBuffer().writeBytes("drhello".getBytes(UTF_8)));
    try {
      for (ByteBuf b : new ByteBuf[] {direct, composite}) {
        RunningChecksum c = new RunningChecksum(ChecksumType.CRC32C);
        c.update(b, 0, 12);
        assertThat(c.value()).isEqualTo(0x24032b9c);
      }
    } finally {
      direct.release();
      composite.release();
    }
  }

  private static byte[] withChecksum(byte[] frame, int offset, int value) {
    byte[] copy = frame.clone();
    copy[offset] = (byte) (value >>> 24);
    copy[offset + 1] = (byte) (value >>> 16);
    copy[offset + 2] = (byte) (value >>> 8);
    copy[offset + 3] = (byte) value;
    return copy;
  }

  @Test
  void badChecksumIsABadRequest() throws Exception {
    CallFrame f = CallFrame.parse(Unpooled.wrappedBuffer(withChecksum(CALL_REQ, 82, 0xdeadbeef)));
    MessageAssembler a = new MessageAssembler(true, f.checksumType(), 1 << 20);
    assertThatThrownBy(() -> a.add(f))
        .isInstanceOfSatisfying(
            ProtocolException.class,
            e -> {
              assertThat(e.isFatal()).isFalse();
              assertThat(e.errorCode()).isEqualTo(ErrorCodes.BAD_REQUEST);
            })
        .hasMessage("invalid checksum (type 3) expected: 3735928559 actual: 604187548");
    a.release();
  }

  @Test
  void farmhashIsParsedNotVerified() throws Exception {
    byte[] frame = CALL_REQ.clone();
    frame[81] = 2;
    CallFrame f = CallFrame.parse(Unpooled.wrappedBuffer(frame));
    assertThat(f.checksumType()).isEqualTo(ChecksumType.FARMHASH);
    MessageAssembler a = new MessageAssembler(true, f.checksumType(), 1 << 20);
    assertThat(a.add(f)).isTrue();
    a.release();
  }

  @Test
  void checksumTypeMustNotChange() throws Exception {
    MessageAssembler a = new MessageAssembler(true, ChecksumType.CRC32C, 1 << 20);
    a.add(CallFrame.parse(Unpooled.wrappedBuffer(FRAGMENT_1)));
    byte[] second = FRAGMENT_2.clone();
    second[17] = 1;
    assertThatThrownBy(() -> a.add(CallFrame.parse(Unpooled.wrappedBuffer(second))))
        .isInstanceOf(ProtocolException.class)
        .hasMessageContaining("checksum type changed from 3 to 1");
    a.release();
  }

  @Test
  void fragmentedArg1IsABadRequest() throws Exception {
    // A first frame with the more flag whose only chunk is arg1.
    byte[] frame = java.util.Arrays.copyOf(FRAGMENT_1, FRAGMENT_1.length - 4);
    frame[1] = (byte) frame.length;
    ByteBuf buf = Unpooled.wrappedBuffer(frame);
    CallFrame f = CallFrame.parse(buf);
    MessageAssembler a = new MessageAssembler(true, ChecksumType.NONE, 1 << 20);
    assertThatThrownBy(() -> a.add(f))
        .isInstanceOf(ProtocolException.class)
        .hasMessage("arg1 must not be fragmented");
    a.release();
  }

  @Test
  void messageSizeLimit() throws Exception {
    CallFrame f = CallFrame.parse(Unpooled.wrappedBuffer(CALL_REQ));
    MessageAssembler a = new MessageAssembler(true, f.checksumType(), 10);
    assertThatThrownBy(() -> a.add(f))
        .isInstanceOfSatisfying(ProtocolException.class, e -> assertThat(e.isTooLarge()).isTrue())
        .hasMessageContaining("exceeds the limit of 10 bytes");
    a.release();
  }

  @Test
  void transportHeaderLimits() {
    assertThatThrownBy(() -> TransportHeaders.read(Unpooled.wrappedBuffer(new byte[] {1, 0, 0})))
        .isInstanceOfSatisfying(ProtocolException.class, e -> assertThat(e.isFatal()).isTrue())
        .hasMessage("empty transport header key");
    ByteBuf dup = Unpooled.buffer().writeByte(2);
    for (int i = 0; i < 2; i++) {
      dup.writeByte(2).writeBytes("cn".getBytes(UTF_8)).writeByte(1).writeByte('x');
    }
    assertThatThrownBy(() -> TransportHeaders.read(dup))
        .hasMessage("duplicate transport header key cn");
    ByteBuf longKey =
        Unpooled.buffer()
            .writeByte(1)
            .writeByte(17)
            .writeBytes("abcdefghijklmnopq".getBytes(UTF_8))
            .writeByte(0);
    assertThatThrownBy(() -> TransportHeaders.read(longKey))
        .hasMessage("transport header key abcdefghijklmnopq exceeds 16 bytes");
  }

  @Test
  void headerMaps() {
    byte[] ab = {0, 1, 0, 1, 'a', 0, 1, 'b'};
    assertThat(ApplicationHeaders.decodeBinary(ab)).containsExactly(Map.entry("a", "b"));
    assertThat(ApplicationHeaders.encodeBinary(Map.of("a", "b"))).isEqualTo(ab);
    assertThat(ApplicationHeaders.encodeBinary(Map.of())).containsExactly(0, 0);
    assertThat(ApplicationHeaders.decodeBinary(new byte[0])).isEmpty();
    assertThatThrownBy(() -> ApplicationHeaders.decodeBinary(new byte[] {0, 2, 0, 1, 'a'}))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(new String(ApplicationHeaders.encodeJson(Map.of()), UTF_8)).isEqualTo("{}");
    assertThat(ApplicationHeaders.decodeJson("{\"k\":\"v\"}\n".getBytes(UTF_8)))
        .containsExactly(Map.entry("k", "v"));
    assertThat(ApplicationHeaders.decodeJson("null".getBytes(UTF_8))).isEmpty();
    assertThat(ApplicationHeaders.decodeJson(new byte[0])).isEmpty();
    assertThatThrownBy(() -> ApplicationHeaders.decodeJson("[1]".getBytes(UTF_8)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ApplicationHeaders.decodeJson("{\"a\":{}}".getBytes(UTF_8)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void headerCountLimits() {
    byte[] claimingMany = {(byte) 0xFF, (byte) 0xFF, 0, 1, 'a'};
    assertThatThrownBy(() -> ApplicationHeaders.decode(claimingMany, "raw", 16))
        .isInstanceOf(ApplicationHeaders.TooManyHeadersException.class)
        .hasMessage("more than 16 headers");
    byte[] three = ApplicationHeaders.encodeBinary(Map.of("a", "1", "b", "2", "c", "3"));
    assertThat(ApplicationHeaders.decode(three, "thrift", 3)).hasSize(3);
    assertThatThrownBy(() -> ApplicationHeaders.decode(three, "thrift", 2))
        .isInstanceOf(ApplicationHeaders.TooManyHeadersException.class);
    byte[] json = "{\"a\":\"1\",\"b\":2,\"c\":true}".getBytes(UTF_8);
    assertThat(ApplicationHeaders.decode(json, "json", 3))
        .containsExactly(Map.entry("a", "1"), Map.entry("b", "2"), Map.entry("c", "true"));
    assertThatThrownBy(() -> ApplicationHeaders.decode(json, "json", 2))
        .isInstanceOf(ApplicationHeaders.TooManyHeadersException.class);
    // repeated keys cost work too: they count as read
    byte[] repeated = "{\"a\":\"1\",\"a\":\"2\",\"a\":\"3\"}".getBytes(UTF_8);
    assertThat(ApplicationHeaders.decode(repeated, "json", 3)).containsExactly(Map.entry("a", "3"));
    assertThatThrownBy(() -> ApplicationHeaders.decode(repeated, "json", 2))
        .isInstanceOf(ApplicationHeaders.TooManyHeadersException.class);
    assertThatThrownBy(() -> ApplicationHeaders.decodeJson("{\"a\":null}".getBytes(UTF_8)))
        .hasMessage("header a must be a string, got null");
    assertThatThrownBy(() -> ApplicationHeaders.decodeJson("{} x".getBytes(UTF_8)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("malformed JSON headers");
    // what a peer reads: no advice to a Java caller, no troubleshooting link
    assertThatThrownBy(
            () -> ApplicationHeaders.decodeJson("{\"a\":\"b\"} trailing".getBytes(UTF_8)))
        .hasMessage("malformed JSON headers: malformed JSON at line 1 column 12 path $");
  }

  @ParameterizedTest
  @CsvSource({
    "CANCELLED, 2",
    "UNKNOWN, 5",
    "INVALID_ARGUMENT, 6",
    "DEADLINE_EXCEEDED, 1",
    "NOT_FOUND, 5",
    "ALREADY_EXISTS, 5",
    "PERMISSION_DENIED, 5",
    "RESOURCE_EXHAUSTED, 3",
    "FAILED_PRECONDITION, 5",
    "ABORTED, 5",
    "OUT_OF_RANGE, 5",
    "UNIMPLEMENTED, 6",
    "INTERNAL, 5",
    "UNAVAILABLE, 4",
    "DATA_LOSS, 255",
    "UNAUTHENTICATED, 5",
  })
  void serverErrorMapping(Code code, int errorCode) {
    assertThat(ErrorCodes.fromCode(code)).isEqualTo(errorCode);
  }

  @ParameterizedTest
  @CsvSource({
    "1, DEADLINE_EXCEEDED", "2, CANCELLED", "3, RESOURCE_EXHAUSTED", "4, UNAVAILABLE",
        "5, INTERNAL",
    "6, INVALID_ARGUMENT", "7, UNAVAILABLE", "8, INTERNAL", "255, INTERNAL", "66, INTERNAL",
  })
  void clientErrorMapping(int errorCode, Code code) {
    assertThat(ErrorCodes.toCode(errorCode)).isEqualTo(code);
  }
}
