package io.yarpc.benchmarks.jmh;

import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.yarpc.transport.Headers;
import io.yarpc.transport.http.internal.WireHeaders;
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
 * The HTTP transport's application-header mapping ({@code WireHeaders}, the yarpc-go wire vocabulary):
 * encode writes YARPC headers as {@code Rpc-Header-*} (canonical MIME casing) into a fresh Netty header
 * map, as the outbound does per request; decode reads them back from a received header map that also
 * holds the usual {@code Rpc-*} request headers.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class HttpHeadersBenchmark {
  /** Application headers per request. */
  @Param({"4", "16"})
  public int headers;

  private Headers yarpc;
  private HttpHeaders received;

  /** Builds both forms of the headers. */
  @Setup
  public void setup() {
    yarpc = HeaderSets.of(headers);
    received = new DefaultHttpHeaders();
    received.add(WireHeaders.CALLER, "bench-client");
    received.add(WireHeaders.SERVICE, "bench-server");
    received.add(WireHeaders.PROCEDURE, "yarpc.benchmarks.Echo::Unary");
    received.add(WireHeaders.ENCODING, "proto");
    received.add(WireHeaders.TTL_MS, "1000");
    received.add("Content-Type", "application/x-protobuf");
    received.add("Content-Length", "350");
    WireHeaders.writeApplicationHeaders(yarpc, received);
  }

  /** YARPC headers into a new Netty header map. */
  @Benchmark
  public HttpHeaders encode() {
    HttpHeaders out = new DefaultHttpHeaders();
    WireHeaders.writeApplicationHeaders(yarpc, out);
    return out;
  }

  /** Application headers out of a received header map. */
  @Benchmark
  public Headers decode() {
    return WireHeaders.applicationHeaders(received);
  }
}
