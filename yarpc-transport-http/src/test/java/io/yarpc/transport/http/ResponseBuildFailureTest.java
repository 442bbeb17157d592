package io.yarpc.transport.http;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.codec.http.HttpMethod;
import io.yarpc.Dispatcher;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A handler's future completes but its answer cannot be built: the response body throws an {@link Error}
 * when asked its length or halfway through writing itself into the transport's buffer, or an error carries
 * a response whose body throws when asked its length (read only for a client that accepts both response
 * and error). Before the fix such an exchange was never answered. Now it is answered at once with
 * {@code internal} and a fixed message (nothing of the handler's text), every buffer and body is released,
 * and the next call on the same connection is served. Checked over HTTP/1.1 (one socket) and h2c (one
 * connection, a stream per call), and through the YARPC outbound.
 */
class ResponseBuildFailureTest {
  private static final String SECRET = "handler-secret-text";
  private static final String FIXED = "the server failed to build the response";

  /** Far below the calls' TTL and the clients' read timeout (10 s): a lost answer would take those. */
  private static final long PROMPT_NANOS = TimeUnit.SECONDS.toNanos(5);

  private final TrackingAllocator serverAlloc = new TrackingAllocator();
  private final List<Body> failingBodies = new CopyOnWriteArrayList<>();
  private HttpTransport transport;
  private HttpInbound inbound;
  private Dispatcher dispatcher;

  /**
   * A body that throws {@code failure} as a broken serialiser would: when asked its length, or (with
   * {@code lengthWorks}) after writing half its bytes into the transport's buffer.
   */
  private static final class FailingBody extends Body {
    private final Throwable failure;
    private final boolean lengthWorks;

    FailingBody(Throwable failure, boolean lengthWorks) {
      this.failure = failure;
      this.lengthWorks = lengthWorks;
    }

    @Override
    public long length() {
      if (lengthWorks) {
        return 8;
      }
      throw unchecked();
    }

    @Override
    public void writeTo(OutputStream out) throws IOException {
      out.write(new byte[4]);
      throw unchecked();
    }

    @Override
    public InputStream openStream() {
      throw new IllegalStateException(SECRET);
    }

    private RuntimeException unchecked() {
      if (failure instanceof Error) {
        throw (Error) failure;
      }
      return (RuntimeException) failure;
    }
  }

  private Body failing(Throwable failure, boolean lengthWorks) {
    Body body = new FailingBody(failure, lengthWorks);
    failingBodies.add(body);
    return body;
  }

  @BeforeEach
  void start() {
    transport = HttpTransport.builder().eventLoopThreads(1).allocator(serverAlloc).build();
    inbound = transport.inbound();
    dispatcher = Dispatcher.builder(YarpcTestService.NAME).inbound(inbound).build();
    dispatcher.register(
        Procedure.builder("echo")
            .unary(
                r ->
                    CompletableFuture.completedFuture(Response.of(Body.of(r.body().toByteArray()))))
            .build(),
        Procedure.builder("lengthThrowsError")
            .unary(
                r ->
                    CompletableFuture.completedFuture(
                        Response.of(failing(new AssertionError(SECRET), false))))
            .build(),
        Procedure.builder("writeThrowsError")
            .unary(
                r ->
                    CompletableFuture.completedFuture(
                        Response.of(failing(new StackOverflowError(SECRET), true))))
            .build(),
        Procedure.builder("errorBodyThrows")
            .unary(
                r ->
                    CompletableFuture.failedFuture(
                        YarpcException.of(Code.FAILED_PRECONDITION, SECRET)
                            .withResponse(
                                Response.of(failing(new IllegalStateException(SECRET), false)))))
            .build());
    dispatcher.start();
  }

  @AfterEach
  void stop() throws InterruptedException {
    dispatcher.stop();
    transport.stop();
    assertThat(failingBodies).isNotEmpty().allSatisfy(b -> assertThat(b.isReleased()).isTrue());
    assertThat(serverAlloc.unreleased()).as("server buffers not released").isEmpty();
  }

  @ParameterizedTest
  @ValueSource(strings = {"lengthThrowsError", "writeThrowsError", "errorBodyThrows"})
  void http1AnswersInternalAndKeepsServing(String procedure) throws Exception {
    try (RawClient c = new RawClient(inbound.address().getPort())) {
      long start = System.nanoTime();
      c.send(RawClient.request(procedure, 0, "Rpc-Accepts-Both-Response-Error: true"));
      RawClient.Res res = c.read();
      assertThat(System.nanoTime() - start).as("answered promptly").isLessThan(PROMPT_NANOS);
      assertThat(res.status()).isEqualTo(500);
      assertThat(res.headers())
          .containsEntry("rpc-error-code", "internal")
          .containsEntry("rpc-error-message", FIXED)
          .doesNotContainKey("connection");
      assertThat(res.body()).isEmpty();
      assertThat(res.toString())
          .doesNotContain(SECRET)
          .doesNotContain("Error")
          .doesNotContain("Exception");

      c.send(RawClient.request("echo", 2)).send("hi");
      RawClient.Res next = c.read();
      assertThat(next.status()).isEqualTo(200);
      assertThat(next.body()).isEqualTo("hi");
    }
    awaitNoActiveRequests();
  }

  @ParameterizedTest
  @ValueSource(strings = {"lengthThrowsError", "writeThrowsError", "errorBodyThrows"})
  void h2cAnswersInternalAndKeepsServing(String procedure) throws Exception {
    try (H2cClient c = new H2cClient(inbound.address().getPort())) {
      long start = System.nanoTime();
      H2cClient.Res res = c.request(HttpMethod.POST, "/", headers(procedure), new byte[0]);
      assertThat(System.nanoTime() - start).as("answered promptly").isLessThan(PROMPT_NANOS);
      assertThat(res.status()).isEqualTo(500);
      assertThat(res.headers())
          .containsEntry("rpc-error-code", "internal")
          .containsEntry("rpc-error-message", FIXED);
      assertThat(res.toString())
          .doesNotContain(SECRET)
          .doesNotContain("Error")
          .doesNotContain("Exception");

      H2cClient.Res next = c.request(HttpMethod.POST, "/", headers("echo"), "hi".getBytes(UTF_8));
      assertThat(next.status()).isEqualTo(200);
      assertThat(next.body()).isEqualTo("hi");
    }
    awaitNoActiveRequests();
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void outboundSeesInternal(boolean http2) throws Exception {
    HttpOutbound out = transport.singleOutboundBuilder(inbound.hostPort()).http2(http2).build();
    out.start();
    try {
      for (String procedure :
          new String[] {"lengthThrowsError", "writeThrowsError", "errorBodyThrows"}) {
        long start = System.nanoTime();
        YarpcException e = failure(out.call(Request.of(meta(procedure), Body.empty())));
        assertThat(System.nanoTime() - start).as("answered promptly").isLessThan(PROMPT_NANOS);
        assertThat(e.code()).as(procedure).isEqualTo(Code.INTERNAL);
        assertThat(e.getMessage()).isEqualTo(FIXED);
      }
      Response r =
          out.call(Request.of(meta("echo"), Body.of(new byte[] {7}))).get(10, TimeUnit.SECONDS);
      assertThat(r.body().toByteArray()).containsExactly(7);
      r.body().release();
    } finally {
      out.stop();
    }
    awaitNoActiveRequests();
  }

  private static Map<String, String> headers(String procedure) {
    return Map.of(
        "rpc-caller",
        "h2c-client",
        "rpc-service",
        YarpcTestService.NAME,
        "rpc-procedure",
        procedure,
        "rpc-encoding",
        "raw",
        "context-ttl-ms",
        "10000",
        "rpc-accepts-both-response-error",
        "true");
  }

  private static RequestMeta meta(String procedure) {
    return RequestMeta.builder()
        .caller("c")
        .service(YarpcTestService.NAME)
        .procedure(procedure)
        .encoding("raw")
        .deadline(Deadline.after(Duration.ofSeconds(10)))
        .build();
  }

  private void awaitNoActiveRequests() throws InterruptedException {
    for (int i = 0; i < 1000 && inbound.activeRequests() > 0; i++) {
      Thread.sleep(10);
    }
    assertThat(inbound.activeRequests()).isZero();
  }

  private static YarpcException failure(CompletableFuture<Response> f) throws Exception {
    try {
      Response r = f.get(10, TimeUnit.SECONDS);
      String got = new String(r.body().toByteArray(), UTF_8);
      r.body().release();
      throw new AssertionError("expected a failure, got " + got);
    } catch (ExecutionException e) {
      return (YarpcException) e.getCause();
    }
  }
}
