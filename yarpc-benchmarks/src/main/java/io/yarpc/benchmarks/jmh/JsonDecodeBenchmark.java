package io.yarpc.benchmarks.jmh;

import static java.nio.charset.StandardCharsets.UTF_8;

import com.google.gson.Gson;
import io.yarpc.encoding.json.Json;
import io.yarpc.transport.Body;
import io.yarpc.transport.Handler;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.util.Arrays;
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
 * JSON decode through the encoding's public API: {@code Json.unaryHandler} fed with {@link Request}s
 * whose body is each kind of {@link Bodies body}, at about 350 B, 10 KiB and 1 MiB of JSON. The handler
 * keeps the decoded object's payload length and returns {@code null}, so the response is the four bytes
 * {@code null\n} and the measurement is (almost) all decode. {@link #copyThenParse} is the "before": the
 * body read into a fresh array and decoded from a {@code String}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class JsonDecodeBenchmark {
  /** Approximate JSON document size in bytes. */
  @Param({"350", "10240", "1048576"})
  public int size;

  /** {@code heap}, {@code direct}, {@code multi} or {@code stream}; see {@link Bodies}. */
  @Param({"heap", "direct", "multi", "stream"})
  public String body;

  /** The decoded type: a payload string and a token. */
  public static final class EchoJson {
    /** The payload. */
    public String payload;

    /** The token. */
    public String token;
  }

  private static final RequestMeta META =
      RequestMeta.builder()
          .caller("bench-client")
          .service("bench-server")
          .procedure("echo")
          .encoding(Json.ENCODING)
          .transport("bench")
          .build();

  private final Gson gson = new Gson();
  private Handler<Request, Response> handler;
  private Bodies bodies;
  private int lastLength;

  /** Builds the JSON document in every body form, and the handler. */
  @Setup
  public void setup() {
    char[] text = new char[Math.max(1, size - 32)];
    Arrays.fill(text, 'x');
    String doc = "{\"payload\":\"" + new String(text) + "\",\"token\":\"bench\"}";
    bodies = new Bodies(body, doc.getBytes(UTF_8));
    handler =
        Json.unaryHandler(
            EchoJson.class,
            gson,
            request -> {
              lastLength = request.payload.length();
              return null;
            });
  }

  /** Decode through the public handler. */
  @Benchmark
  public int yarpcDecode() throws Exception {
    Body b = bodies.newBody();
    try {
      Response r = handler.handle(Request.of(META, b)).join();
      r.body().release();
      return lastLength;
    } finally {
      b.release();
    }
  }

  /** Before: the body copied into an array, then into a String, then decoded. */
  @Benchmark
  public int copyThenParse() {
    Body b = bodies.newBody();
    try {
      return gson.fromJson(new String(b.toByteArray(), UTF_8), EchoJson.class).payload.length();
    } finally {
      b.release();
    }
  }
}
