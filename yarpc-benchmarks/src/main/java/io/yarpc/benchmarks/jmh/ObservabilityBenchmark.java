package io.yarpc.benchmarks.jmh;

import io.yarpc.Dispatcher;
import io.yarpc.benchmarks.load.BenchObservability;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Handler;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What observability adds to one inbound unary call, without a transport: a dispatcher's routed handler
 * (middleware, deadline, error mapping) called directly on this thread, with what the load harness's
 * {@code --observability} installs ({@code none}, or {@code on}: tracing sampled out, metrics into a
 * Prometheus registry, call logs with successes off). Each call gets metadata with fresh strings, as a
 * transport decodes them, and a deadline, as a YARPC caller sends one. The difference between the two
 * rows is the cost the load harness's server CPU per call includes, without that measurement's noise.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class ObservabilityBenchmark {
  /** {@code none}, {@code on}, or a list of {@code metrics}, {@code logs}, {@code tracing}. */
  @Param({"none", "on"})
  public String observability;

  private static final byte[] PAYLOAD = new byte[350];

  private Dispatcher dispatcher;

  /** A started dispatcher with an echo procedure, its handlers run on the calling thread. */
  @Setup
  public void setUp() {
    Dispatcher.Builder builder = Dispatcher.builder("bench-server").handlerExecutor(Runnable::run);
    BenchObservability.install(builder, observability);
    dispatcher = builder.build();
    dispatcher.register(
        Procedure.builder("echo")
            .unary(request -> CompletableFuture.completedFuture(Response.of(request.body())))
            .build());
    dispatcher.start();
  }

  /** Stops the dispatcher. */
  @TearDown
  public void tearDown() {
    dispatcher.stop();
  }

  /** Routes and handles one call, as an inbound does, and releases the response. */
  @Benchmark
  public long call() {
    RequestMeta meta =
        RequestMeta.builder()
            .caller(fresh("bench-client"))
            .service(fresh("bench-server"))
            .procedure(fresh("echo"))
            .encoding(fresh("raw"))
            .transport("grpc")
            .deadline(Deadline.after(Duration.ofSeconds(10)))
            .build();
    Handler<Request, Response> handler = dispatcher.router().choose(meta).unary();
    Response response = handler.handle(Request.of(meta, Body.of(PAYLOAD))).join();
    long length = response.body().length();
    response.body().release();
    return length;
  }

  private static String fresh(String s) {
    return new String(s.toCharArray());
  }
}
