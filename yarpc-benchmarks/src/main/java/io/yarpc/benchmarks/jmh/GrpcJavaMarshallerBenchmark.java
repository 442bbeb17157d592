package io.yarpc.benchmarks.jmh;

import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.grpc.protobuf.ProtoUtils;
import io.yarpc.benchmarks.load.LoadMessages;
import io.yarpc.benchmarks.proto.EchoMessage;
import java.io.ByteArrayInputStream;
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
 * The reference point for {@link ProtobufDecodeBenchmark}: plain grpc-java's default protobuf marshaller
 * ({@code ProtoUtils.marshaller}) parsing a {@link KnownLength} stream, as grpc-netty hands it a received
 * message. It copies the message into a reused thread-local array and parses from there without aliasing,
 * so its {@code gc.alloc.rate.norm} is the parsed message itself (about the payload plus a few hundred
 * bytes).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class GrpcJavaMarshallerBenchmark {
  /** Payload bytes. */
  @Param({"350", "10240", "1048576"})
  public int size;

  private final MethodDescriptor.Marshaller<EchoMessage> marshaller =
      ProtoUtils.marshaller(EchoMessage.getDefaultInstance());
  private byte[] bytes;

  /** Serialises the message once. */
  @Setup
  public void setup() {
    bytes = LoadMessages.message(size).toByteArray();
  }

  /** grpc-java's parse of one received message. */
  @Benchmark
  public EchoMessage grpcJavaParse() {
    return marshaller.parse(new KnownLengthStream(bytes));
  }

  /** A byte array stream that tells its length, like grpc-netty's message streams. */
  static final class KnownLengthStream extends ByteArrayInputStream implements KnownLength {
    KnownLengthStream(byte[] bytes) {
      super(bytes);
    }
  }
}
