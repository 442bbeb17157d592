package io.yarpc.benchmarks.jmh;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.yarpc.transport.Headers;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.tchannel.internal.ApplicationHeaders;
import io.yarpc.transport.tchannel.internal.CallCodec;
import io.yarpc.transport.tchannel.internal.TransportHeaders;
import java.util.LinkedHashMap;
import java.util.Map;
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
 * TChannel's arg2 application headers ({@code ApplicationHeaders}): the binary header map every arg scheme
 * but {@code json} uses, and the JSON object of the {@code json} scheme. {@link #encode} does what the
 * outbound does per request (headers into an ordered map, then encoded); {@link #decode} is the codec
 * alone; {@link #decodeRequestMeta} is the server's whole metadata decode from transport headers, arg1
 * and arg2 ({@code CallCodec.decodeRequestMeta}).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class TChannelHeadersBenchmark {
  /** Application headers per request. */
  @Param({"4", "16"})
  public int headers;

  /** The arg scheme: {@code proto} (binary map) or {@code json}. */
  @Param({"proto", "json"})
  public String scheme;

  private Headers yarpc;
  private byte[] arg2;
  private byte[] arg1;
  private Map<String, String> transportHeaders;

  /** Builds the headers and their encoded form. */
  @Setup
  public void setup() {
    yarpc = HeaderSets.of(headers);
    arg2 = encode();
    arg1 = "yarpc.benchmarks.Echo::Unary".getBytes(UTF_8);
    transportHeaders = new LinkedHashMap<>();
    transportHeaders.put(TransportHeaders.ARG_SCHEME, scheme);
    transportHeaders.put(TransportHeaders.CALLER, "bench-client");
  }

  /** Headers to arg2 bytes, as the outbound builds them. */
  @Benchmark
  public byte[] encode() {
    Map<String, String> m = new LinkedHashMap<>();
    yarpc.forEach(m::put);
    return ApplicationHeaders.encode(m, scheme);
  }

  /** arg2 bytes to a header map. */
  @Benchmark
  public Map<String, String> decode() {
    return ApplicationHeaders.decode(arg2, scheme);
  }

  /** The server's request metadata from transport headers, arg1 and arg2. */
  @Benchmark
  public RequestMeta decodeRequestMeta() {
    return CallCodec.decodeRequestMeta("bench-server", transportHeaders, 1000, arg1, arg2);
  }
}
