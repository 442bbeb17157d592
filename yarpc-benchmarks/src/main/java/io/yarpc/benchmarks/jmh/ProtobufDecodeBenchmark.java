package io.yarpc.benchmarks.jmh;

import com.google.protobuf.InvalidProtocolBufferException;
import io.yarpc.benchmarks.load.LoadMessages;
import io.yarpc.benchmarks.proto.EchoMessage;
import io.yarpc.encoding.protobuf.Protobuf;
import io.yarpc.encoding.protobuf.ProtobufCodec;
import io.yarpc.encoding.protobuf.unsafe.UnsafeAliasing;
import io.yarpc.transport.Body;
import java.io.IOException;
import java.io.InputStream;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Binary protobuf decode of {@code EchoMessage} (a {@code bytes} payload and a token) from each kind of
 * body (see {@link Bodies}) at 350 B, 10 KiB and 1 MiB. Run with {@code -prof gc}: {@code
 * gc.alloc.rate.norm} is the heap bytes per decode.
 *
 * <ul>
 *   <li>{@link #yarpcDecode}: the encoding's public API, {@code ProtobufCodec.decode(body, "proto")} —
 *       byte access first (heap: in place; direct and multi: one copy into a reused scratch array), the
 *       stream only when there is no byte access;
 *   <li>{@link #unsafeAliasingDecode}: {@code UnsafeAliasing.decode}, the opt-in path whose {@code bytes}
 *       field aliases a pooled array;
 *   <li>{@link #copyThenParse} and {@link #parseFromStream}: the "before" — what a decoder without byte
 *       access does (read the body into a fresh array, or let protobuf read its stream).
 * </ul>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class ProtobufDecodeBenchmark {
  /** Serialised message size is the payload plus 10 bytes of framing and token. */
  @Param({"350", "10240", "1048576"})
  public int size;

  /** {@code heap}, {@code direct}, {@code multi} or {@code stream}; see {@link Bodies}. */
  @Param({"heap", "direct", "multi", "stream"})
  public String body;

  private final ProtobufCodec<EchoMessage> codec =
      ProtobufCodec.of(EchoMessage.getDefaultInstance());
  private final UnsafeAliasing aliasing = UnsafeAliasing.create();
  private Bodies bodies;

  /** Builds the message's bytes in every form. */
  @Setup
  public void setup() {
    bodies = new Bodies(body, LoadMessages.message(size).toByteArray());
  }

  /** The encoding's public decode. */
  @Benchmark
  public EchoMessage yarpcDecode() throws IOException {
    Body b = bodies.newBody();
    try {
      return codec.decode(b, Protobuf.ENCODING);
    } finally {
      b.release();
    }
  }

  /** The opt-in aliasing decode; the pooled array goes back at once. */
  @Benchmark
  public int unsafeAliasingDecode() throws IOException {
    Body b = bodies.newBody();
    try (UnsafeAliasing.Aliased<EchoMessage> a = aliasing.decode(codec, b)) {
      return a.message().getPayload().size();
    } finally {
      b.release();
    }
  }

  /** Before: the body read into a fresh array, then parsed (what bytes.NewReader + ReadFrom did in Go). */
  @Benchmark
  public EchoMessage copyThenParse() throws InvalidProtocolBufferException {
    Body b = bodies.newBody();
    try {
      return EchoMessage.parseFrom(b.toByteArray());
    } finally {
      b.release();
    }
  }

  /** Before: protobuf reading the body's stream itself. */
  @Benchmark
  public EchoMessage parseFromStream() throws IOException {
    Body b = bodies.newBody();
    try (InputStream in = b.openStream()) {
      return EchoMessage.parseFrom(in);
    } finally {
      b.release();
    }
  }
}
