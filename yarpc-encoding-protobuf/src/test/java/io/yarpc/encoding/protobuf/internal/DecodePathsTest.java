package io.yarpc.encoding.protobuf.internal;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.yarpc.encoding.protobuf.CountingBody;
import io.yarpc.encoding.protobuf.CountingBody.Shape;
import io.yarpc.encoding.protobuf.ProtobufCodec;
import io.yarpc.encoding.protobuf.testing.EchoRequest;
import io.yarpc.encoding.protobuf.testing.strict.Strict;
import io.yarpc.encoding.protobuf.unsafe.UnsafeAliasing;
import io.yarpc.transport.Body;
import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The decode paths of the protobuf codec, mirroring the seed's tests (yarpc-go #2441): the fast path is
 * taken — byte access used, the stream never opened — for heap, direct and multi-buffer views; heap views
 * parse in place (the scratch array stays untouched); the fallback reads a plain stream; empty and
 * malformed bodies. Each decode runs on a fresh thread so its scratch array starts empty.
 */
class DecodePathsTest {
  private static final ProtobufCodec<EchoRequest> CODEC =
      ProtobufCodec.of(EchoRequest.getDefaultInstance());
  private static final EchoRequest MESSAGE =
      EchoRequest.newBuilder()
          .setMessage("hello")
          .setPayload(ByteString.copyFrom(new byte[300], 0, 300))
          .setCount(3)
          .build();

  @BeforeEach
  void resetStats() {
    DecodeStats.reset();
  }

  /** Runs {@code task} on a new thread (a thread with no scratch array yet). */
  private static <T> T onFreshThread(Callable<T> task) {
    CompletableFuture<T> f = new CompletableFuture<>();
    Thread t =
        new Thread(
            () -> {
              try {
                f.complete(task.call());
              } catch (Throwable e) {
                f.completeExceptionally(e);
              }
            });
    t.start();
    return f.join();
  }

  private record Outcome(EchoRequest message, int scratchLength) {}

  private static Outcome decodeOnFreshThread(Body body, String encoding) {
    return onFreshThread(() -> new Outcome(CODEC.decode(body, encoding), Scratch.retainedLength()));
  }

  @ParameterizedTest
  @EnumSource(
      value = Shape.class,
      names = {"HEAP", "HEAP_OFFSET"})
  void heapViewIsParsedInPlace(Shape shape) {
    CountingBody body = new CountingBody(MESSAGE.toByteArray(), shape);

    Outcome out = decodeOnFreshThread(body, "proto");

    assertThat(out.message()).isEqualTo(MESSAGE);
    assertThat(body.byteBuffersCalls).as("byte access used").isEqualTo(1);
    assertThat(body.openStreamCalls).as("stream never opened").isZero();
    assertThat(DecodeStats.IN_PLACE.sum()).isEqualTo(1);
    assertThat(DecodeStats.COPIED.sum() + DecodeStats.STREAMED.sum()).isZero();
    assertThat(out.scratchLength())
        .as("no scratch array was needed: parsed from the view's own array")
        .isZero();
  }

  @Test
  void immutableArrayIsParsedInPlaceWithAliasingAndOtherArraysAreNot() {
    byte[] payload = new byte[300];
    for (int i = 0; i < payload.length; i++) {
      payload[i] = (byte) (i * 7 + 1); // no run of it occurs elsewhere in the message
    }
    EchoRequest message = MESSAGE.toBuilder().setPayload(ByteString.copyFrom(payload)).build();
    byte[] wire = message.toByteArray();
    int payloadAt = indexOf(wire, payload);
    byte[] framed = new byte[wire.length + 7];
    System.arraycopy(wire, 0, framed, 7, wire.length);

    EchoRequest aliased =
        decodeOnFreshThread(Body.ofImmutable(framed, 7, wire.length), "proto").message();
    byte[] plain = wire.clone();
    EchoRequest copied = decodeOnFreshThread(Body.of(plain), "proto").message();
    assertThat(aliased).isEqualTo(message);
    assertThat(copied).isEqualTo(message);
    assertThat(DecodeStats.IN_PLACE_ALIASED.sum()).isEqualTo(1);
    assertThat(DecodeStats.IN_PLACE.sum()).isEqualTo(1);
    assertThat(DecodeStats.COPIED.sum() + DecodeStats.STREAMED.sum()).isZero();

    // Nobody may write into an immutable body's array; the test does, to see where the field
    // points.
    framed[7 + payloadAt] = 42;
    assertThat(aliased.getPayload().byteAt(0))
        .as("the bytes field points into the immutable body's array")
        .isEqualTo((byte) 42);
    assertThat(aliased.getPayload().byteAt(1)).isEqualTo(payload[1]);
    assertThat(aliased.getMessage()).as("strings are decoded, not aliased").isEqualTo("hello");
    plain[payloadAt] = 42;
    assertThat(copied.getPayload().byteAt(0))
        .as("a plain body's fields are copied out")
        .isEqualTo(payload[0]);
  }

  private static int indexOf(byte[] haystack, byte[] needle) {
    for (int i = 0; i + needle.length <= haystack.length; i++) {
      if (Arrays.equals(haystack, i, i + needle.length, needle, 0, needle.length)) {
        return i;
      }
    }
    throw new AssertionError("not found");
  }

  @ParameterizedTest
  @EnumSource(
      value = Shape.class,
      names = {"DIRECT", "MULTI_HEAP", "MULTI_DIRECT"})
  void directAndMultiBufferViewsAreCopiedOnceIntoScratch(Shape shape) {
    CountingBody body = new CountingBody(MESSAGE.toByteArray(), shape);

    Outcome out = decodeOnFreshThread(body, "proto");

    assertThat(out.message()).isEqualTo(MESSAGE);
    assertThat(body.byteBuffersCalls).as("byte access used").isEqualTo(1);
    assertThat(body.openStreamCalls).as("stream never opened").isZero();
    assertThat(DecodeStats.COPIED.sum()).isEqualTo(1);
    assertThat(DecodeStats.IN_PLACE.sum() + DecodeStats.STREAMED.sum()).isZero();
    assertThat(out.scratchLength())
        .as("copied into the thread's scratch array")
        .isGreaterThanOrEqualTo(MESSAGE.getSerializedSize());
  }

  @ParameterizedTest
  @EnumSource(
      value = Shape.class,
      names = {"STREAM", "STREAM_UNKNOWN_LENGTH"})
  void bodyWithoutByteAccessIsReadThroughItsStream(Shape shape) {
    CountingBody body = new CountingBody(MESSAGE.toByteArray(), shape);

    Outcome out = decodeOnFreshThread(body, "proto");

    assertThat(out.message()).isEqualTo(MESSAGE);
    assertThat(body.byteBuffersCalls).isZero();
    assertThat(body.openStreamCalls).isEqualTo(1);
    assertThat(DecodeStats.STREAMED.sum()).isEqualTo(1);
    assertThat(out.scratchLength()).isGreaterThanOrEqualTo(MESSAGE.getSerializedSize());
  }

  @Test
  void scratchArrayIsReusedAndCapped() {
    onFreshThread(
        () -> {
          byte[] small = MESSAGE.toByteArray();
          CODEC.decode(new CountingBody(small, Shape.DIRECT), "proto");
          int first = Scratch.retainedLength();
          CODEC.decode(new CountingBody(small, Shape.MULTI_DIRECT), "proto");
          assertThat(Scratch.retainedLength())
              .as("the same array serves the next decode")
              .isEqualTo(first);

          EchoRequest huge =
              EchoRequest.newBuilder().setPayload(ByteString.copyFrom(new byte[5 << 20])).build();
          assertThat(
                  CODEC.decode(new CountingBody(huge.toByteArray(), Shape.MULTI_DIRECT), "proto"))
              .isEqualTo(huge);
          assertThat(Scratch.retainedLength())
              .as("bodies above 4 MiB get a one-off array")
              .isLessThanOrEqualTo(Scratch.MAX_RETAINED);
          return null;
        });
  }

  @ParameterizedTest
  @EnumSource(
      value = Shape.class,
      names = {"STREAM", "STREAM_UNKNOWN_LENGTH"})
  void largeStreamsAreReadWhole(Shape shape) throws Exception {
    byte[] payload = new byte[(5 << 20) + 3];
    new java.util.Random(3).nextBytes(payload);
    EchoRequest big = EchoRequest.newBuilder().setPayload(ByteString.copyFrom(payload)).build();
    assertThat(CODEC.decode(new CountingBody(big.toByteArray(), shape), "proto")).isEqualTo(big);
    UnsafeAliasing pool = UnsafeAliasing.create();
    try (UnsafeAliasing.Aliased<EchoRequest> a =
        pool.decode(CODEC, new CountingBody(big.toByteArray(), shape))) {
      assertThat(a.message()).isEqualTo(big);
    }
  }

  @Test
  void jsonIsReadFromByteAccessIgnoringUnknownFields() throws Exception {
    CountingBody body =
        new CountingBody(
            "{\"message\":\"hi\",\"count\":2,\"notAField\":{\"x\":1}}".getBytes(UTF_8),
            Shape.MULTI_DIRECT);

    EchoRequest decoded = CODEC.decode(body, "json");

    assertThat(decoded).isEqualTo(EchoRequest.newBuilder().setMessage("hi").setCount(2).build());
    assertThat(body.byteBuffersCalls).isEqualTo(1);
    assertThat(body.openStreamCalls).isZero();
    assertThat(DecodeStats.JSON_VIEWS.sum()).isEqualTo(1);
  }

  @ParameterizedTest
  @EnumSource(value = Shape.class)
  void emptyBodyIsTheDefaultMessage(Shape shape) throws Exception {
    assertThat(CODEC.decode(new CountingBody(new byte[0], shape), "proto"))
        .isEqualTo(EchoRequest.getDefaultInstance());
    assertThat(CODEC.decode(new CountingBody(new byte[0], shape), "json"))
        .isEqualTo(EchoRequest.getDefaultInstance());
    assertThat(CODEC.decode(Body.empty(), "proto")).isEqualTo(EchoRequest.getDefaultInstance());
  }

  @ParameterizedTest
  @EnumSource(value = Shape.class)
  void emptyBodyForMessageWithRequiredContentFails(Shape shape) {
    ProtobufCodec<Strict> strict = ProtobufCodec.of(Strict.getDefaultInstance());
    assertThatThrownBy(() -> strict.decode(new CountingBody(new byte[0], shape), "proto"))
        .isInstanceOf(InvalidProtocolBufferException.class)
        .hasMessageContaining("missing required fields: id");
    assertThatThrownBy(() -> strict.decode(new CountingBody(new byte[0], shape), "json"))
        .isInstanceOf(InvalidProtocolBufferException.class)
        .hasMessageContaining("missing required fields: id");
  }

  @ParameterizedTest
  @EnumSource(value = Shape.class)
  void malformedProtobufFails(Shape shape) {
    byte[] truncated =
        Arrays.copyOf(MESSAGE.toByteArray(), 20); // a length-delimited field cut short
    assertThatThrownBy(() -> CODEC.decode(new CountingBody(truncated, shape), "proto"))
        .isInstanceOf(InvalidProtocolBufferException.class);
    byte[] endGroup = {0x0c}; // a stray end-group tag
    assertThatThrownBy(() -> CODEC.decode(new CountingBody(endGroup, shape), "proto"))
        .isInstanceOf(InvalidProtocolBufferException.class);
    assertThatThrownBy(
            () -> CODEC.decode(new CountingBody("{\"message\":".getBytes(UTF_8), shape), "json"))
        .isInstanceOf(InvalidProtocolBufferException.class);
  }

  @Test
  void otherEncodingsAreRejected() {
    assertThatThrownBy(() -> CODEC.decode(Body.of(MESSAGE.toByteArray()), "thrift"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void binaryEncodingIsLazyOfKnownLength() throws Exception {
    Body body = CODEC.encode(MESSAGE, "proto");

    assertThat(body.hasByteAccess())
        .as("nothing serialised before the transport writes it")
        .isFalse();
    assertThat(body.length()).isEqualTo(MESSAGE.getSerializedSize());
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    body.writeTo(out);
    assertThat(out.toByteArray()).isEqualTo(MESSAGE.toByteArray());
  }

  @Test
  void jsonEncodingIsCompactProto3Json() throws Exception {
    Body body = CODEC.encode(EchoRequest.newBuilder().setMessage("hi").setCount(2).build(), "json");
    assertThat(new String(body.toByteArray(), UTF_8)).isEqualTo("{\"message\":\"hi\",\"count\":2}");
  }

  @Test
  void unsafeAliasingPointsIntoThePooledArrayUntilClosed() throws Exception {
    UnsafeAliasing pool = UnsafeAliasing.builder().maxPooledBytes(1 << 20).build();
    byte[] payload = new byte[10_000];
    Arrays.fill(payload, (byte) 'a');
    EchoRequest sent = EchoRequest.newBuilder().setPayload(ByteString.copyFrom(payload)).build();
    CountingBody body = new CountingBody(sent.toByteArray(), Shape.MULTI_DIRECT);

    UnsafeAliasing.Aliased<EchoRequest> aliased = pool.decode(CODEC, body);
    EchoRequest decoded = aliased.message();
    assertThat(decoded).isEqualTo(sent);
    assertThat(body.openStreamCalls).isZero();
    assertThat(DecodeStats.ALIASED.sum()).isEqualTo(1);

    // The hazard, made visible: once given back, the array is the next borrower's and the field
    // changes.
    aliased.close();
    byte[] reused = AliasingPools.poolOf(pool).borrow(sent.getSerializedSize());
    Arrays.fill(reused, (byte) 'z');
    assertThat(decoded.getPayload().byteAt(0))
        .as("the bytes field aliased the pooled array")
        .isEqualTo((byte) 'z');
    AliasingPools.poolOf(pool).giveBack(reused);
    assertThat(pool.allocatedArrays()).as("the second borrow reused the first array").isEqualTo(1);
  }
}
