package io.yarpc.encoding.protobuf.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.yarpc.encoding.protobuf.ProtobufCodec;
import io.yarpc.encoding.protobuf.testing.EchoRequest;
import io.yarpc.transport.Body;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The binary encode path: the bytes protobuf itself writes, without a buffer per message. */
class ProtoEncodingTest {
  private static final ProtobufCodec<EchoRequest> CODEC =
      ProtobufCodec.of(EchoRequest.getDefaultInstance());

  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  private static EchoRequest message(int payload) {
    byte[] bytes = new byte[payload];
    new Random(payload).nextBytes(bytes);
    return EchoRequest.newBuilder()
        .setMessage("héllo")
        .setPayload(ByteString.copyFrom(bytes))
        .build();
  }

  /** Sizes around the scratch limit, the scratch array's first size, and none at all. */
  @ParameterizedTest
  @ValueSource(ints = {0, 1, 300, 4090, 4096, 10_000, 65_520, 65_536, 70_000, 1 << 20})
  void writesTheBytesProtobufWrites(int payload) throws IOException {
    EchoRequest m = message(payload);
    Body body = CODEC.encode(m, "proto");
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    body.writeTo(out);

    assertThat(body.length()).isEqualTo(m.getSerializedSize());
    assertThat(out.toByteArray()).isEqualTo(m.toByteArray());
    assertThat(CODEC.decode(Body.of(out.toByteArray()), "proto")).isEqualTo(m);
  }

  @Test
  void aBodyWrittenTwiceWritesTheSameBytes() throws IOException {
    EchoRequest m = message(1000);
    Body body = CODEC.encode(m, "proto");
    ByteArrayOutputStream first = new ByteArrayOutputStream();
    ByteArrayOutputStream second = new ByteArrayOutputStream();
    body.writeTo(first);
    body.writeTo(second);

    assertThat(second.toByteArray()).isEqualTo(first.toByteArray()).isEqualTo(m.toByteArray());
  }

  @Test
  void aSizeThatDoesNotMatchTheMessageFailsAndWritesNothing() throws IOException {
    EchoRequest m = message(100);
    ByteArrayOutputStream out = new ByteArrayOutputStream();

    assertThatThrownBy(() -> ProtoEncoding.writeTo(m, m.getSerializedSize() + 1, out))
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> ProtoEncoding.writeTo(m, m.getSerializedSize() - 1, out))
        .isInstanceOfAny(IllegalStateException.class, IOException.class);
    assertThat(out.size()).isZero();
    // the thread's scratch array was handed back both times
    allocatesNoBufferPerWrite(10_000);
  }

  @Test
  void aFailingOutputFailsTheWriteAndFreesTheScratchArray() throws IOException {
    EchoRequest m = message(100);
    OutputStream broken =
        new OutputStream() {
          @Override
          public void write(int b) throws IOException {
            throw new IOException("closed");
          }

          @Override
          public void write(byte[] b, int off, int len) throws IOException {
            throw new IOException("closed");
          }
        };

    assertThatThrownBy(() -> ProtoEncoding.writeTo(m, m.getSerializedSize(), broken))
        .isInstanceOf(IOException.class)
        .hasMessage("closed");
    allocatesNoBufferPerWrite(10_000);
  }

  /**
   * protobuf's own {@code writeTo(OutputStream)} allocates a buffer of up to 4 KiB per message; this path
   * allocates only the encoder (tens of bytes).
   */
  @ParameterizedTest
  @ValueSource(ints = {350, 10_240})
  void allocatesNoBufferPerWrite(int payload) throws IOException {
    EchoRequest m = message(payload);
    int size = m.getSerializedSize();
    OutputStream sink = OutputStream.nullOutputStream();
    for (int i = 0; i < 2_000; i++) {
      ProtoEncoding.writeTo(m, size, sink);
    }
    long id = Thread.currentThread().getId();
    int n = 1_000;
    long before = THREADS.getThreadAllocatedBytes(id);
    for (int i = 0; i < n; i++) {
      ProtoEncoding.writeTo(m, size, sink);
    }
    double perWrite = (double) (THREADS.getThreadAllocatedBytes(id) - before) / n;

    assertThat(perWrite).as("bytes allocated per write of a %d B message", size).isLessThan(200);
  }
}
