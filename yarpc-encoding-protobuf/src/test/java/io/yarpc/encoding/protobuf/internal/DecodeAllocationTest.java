package io.yarpc.encoding.protobuf.internal;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.yarpc.encoding.protobuf.ProtobufCodec;
import io.yarpc.encoding.protobuf.testing.EchoRequest;
import io.yarpc.encoding.protobuf.unsafe.UnsafeAliasing;
import io.yarpc.transport.Body;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Heap bytes allocated per decode of a 1 MiB request (the acceptance figures, measured here with
 * the JVM's per-thread allocation counter; the JMH benchmark in yarpc-benchmarks measures the same with
 * {@code -prof gc}): at most 1.05x the payload on the default path — the decoded {@code bytes} field
 * itself — and at most 0.05x with aliasing.
 */
class DecodeAllocationTest {
  private static final int PAYLOAD = 1 << 20;
  private static final int WARMUP = 200;
  private static final int MEASURED = 100;

  private static final ProtobufCodec<EchoRequest> CODEC =
      ProtobufCodec.of(EchoRequest.getDefaultInstance());

  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  private interface Decode {
    void run() throws Exception;
  }

  private static double bytesPerOp(Decode decode) throws Exception {
    for (int i = 0; i < WARMUP; i++) {
      decode.run();
    }
    long id = Thread.currentThread().getId();
    long before = THREADS.getThreadAllocatedBytes(id);
    for (int i = 0; i < MEASURED; i++) {
      decode.run();
    }
    return (double) (THREADS.getThreadAllocatedBytes(id) - before) / MEASURED;
  }

  private static byte[] request() {
    byte[] payload = new byte[PAYLOAD];
    new Random(1).nextBytes(payload);
    return EchoRequest.newBuilder()
        .setMessage("m")
        .setPayload(ByteString.copyFrom(payload))
        .build()
        .toByteArray();
  }

  /** The bytes as a received network body: direct 16 KiB views (as the in-memory transport makes them). */
  private static Body directFrames(byte[] bytes) {
    ByteBuffer all = ByteBuffer.allocateDirect(bytes.length);
    all.put(bytes).flip();
    List<ByteBuffer> views = new ArrayList<>();
    for (int off = 0; off < bytes.length; off += 16 * 1024) {
      views.add(all.slice(off, Math.min(16 * 1024, bytes.length - off)));
    }
    return Body.ofBuffers(views, null);
  }

  @Test
  void defaultPathAllocatesAboutThePayloadOnce() throws Exception {
    byte[] bytes = request();
    Body direct = directFrames(bytes);
    Body heap = Body.of(bytes);

    double directPerOp = bytesPerOp(() -> CODEC.decode(direct, "proto"));
    double heapPerOp = bytesPerOp(() -> CODEC.decode(heap, "proto"));

    System.out.printf(
        "1 MiB decode, default path: direct multi-buffer %.0f B/op (%.3fx), heap view %.0f B/op"
            + " (%.3fx)%n",
        directPerOp, directPerOp / PAYLOAD, heapPerOp, heapPerOp / PAYLOAD);
    assertThat(directPerOp).isLessThanOrEqualTo(1.05 * PAYLOAD);
    assertThat(heapPerOp).isLessThanOrEqualTo(1.05 * PAYLOAD);
  }

  @Test
  void aliasingPathAllocatesAlmostNothing() throws Exception {
    UnsafeAliasing pool = UnsafeAliasing.create();
    Body direct = directFrames(request());

    double perOp =
        bytesPerOp(
            () -> {
              try (UnsafeAliasing.Aliased<EchoRequest> a = pool.decode(CODEC, direct)) {
                a.message();
              }
            });

    System.out.printf("1 MiB decode, aliasing path: %.0f B/op (%.4fx)%n", perOp, perOp / PAYLOAD);
    assertThat(perOp).isLessThanOrEqualTo(0.05 * PAYLOAD);
  }
}
