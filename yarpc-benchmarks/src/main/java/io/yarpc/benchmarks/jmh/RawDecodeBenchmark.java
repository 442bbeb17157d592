package io.yarpc.benchmarks.jmh;

import io.yarpc.benchmarks.load.LoadMessages;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.transport.Body;
import io.yarpc.transport.Handler;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
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
 * Raw decode through the encoding's public API: {@code Raw.unaryHandler} (an echo handler: the request
 * array becomes the response body without a copy) fed with {@link Request}s whose body is each kind of
 * {@link Bodies body}. The raw encoding gives the handler an array it owns, so every path copies the
 * payload exactly once; what differs is how ({@code System.arraycopy} from views, or reads from a
 * stream).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class RawDecodeBenchmark {
  /** Body bytes. */
  @Param({"350", "10240", "1048576"})
  public int size;

  /** {@code heap}, {@code direct}, {@code multi} or {@code stream}; see {@link Bodies}. */
  @Param({"heap", "direct", "multi", "stream"})
  public String body;

  private static final RequestMeta META =
      RequestMeta.builder()
          .caller("bench-client")
          .service("bench-server")
          .procedure("echo")
          .encoding(Raw.ENCODING)
          .transport("bench")
          .build();

  private final Handler<Request, Response> handler = Raw.unaryHandler(bytes -> bytes);
  private Bodies bodies;

  /** Builds the bytes in every body form. */
  @Setup
  public void setup() {
    bodies = new Bodies(body, LoadMessages.message(size).getPayload().toByteArray());
  }

  /** Decode (one copy) through the public handler. */
  @Benchmark
  public long yarpcDecode() throws Exception {
    Body b = bodies.newBody();
    try {
      Response r = handler.handle(Request.of(META, b)).join();
      long n = r.body().length();
      r.body().release();
      return n;
    } finally {
      b.release();
    }
  }
}
