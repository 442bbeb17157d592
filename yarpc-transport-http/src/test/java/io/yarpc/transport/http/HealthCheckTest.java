package io.yarpc.transport.http;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.handler.codec.http.HttpMethod;
import io.yarpc.Dispatcher;
import io.yarpc.transport.Body;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Response;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The HTTP inbound's health path, as a load balancer or a Kubernetes probe sees it: {@code GET} and
 * {@code HEAD} on HTTP/1.1 and h2c, 200 while serving and 503 from the moment the dispatcher begins to
 * stop, no {@code Rpc-*} headers; a custom path, turned off, and {@code POST} to the path still a YARPC
 * call.
 */
class HealthCheckTest {
  private HttpTransport transport;
  private HttpInbound inbound;
  private Dispatcher dispatcher;
  private final CountDownLatch slowEntered = new CountDownLatch(1);
  private final CountDownLatch release = new CountDownLatch(1);

  private void start(UnaryOperator<HttpInbound.Builder> options) {
    transport = HttpTransport.builder().eventLoopThreads(2).build();
    inbound = options.apply(transport.inboundBuilder()).build();
    dispatcher =
        Dispatcher.builder(YarpcTestService.NAME)
            .inbound(inbound)
            .shutdownGracePeriod(Duration.ofSeconds(20))
            .build();
    dispatcher.register(
        Procedure.builder("slow")
            .unary(
                r -> {
                  r.body().release();
                  slowEntered.countDown();
                  return CompletableFuture.supplyAsync(
                      () -> {
                        try {
                          release.await(30, TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                          Thread.currentThread().interrupt();
                        }
                        return Response.of(Body.of("done".getBytes(UTF_8)));
                      });
                })
            .build(),
        Procedure.builder("echo")
            .unary(
                r ->
                    CompletableFuture.completedFuture(Response.of(Body.of(r.body().toByteArray()))))
            .build());
    dispatcher.start();
  }

  @AfterEach
  void stop() {
    release.countDown();
    if (dispatcher != null) {
      dispatcher.stop();
    }
  }

  private RawClient.Res http1(String method, String target) throws Exception {
    try (RawClient c = new RawClient(inbound.address().getPort())) {
      c.send(method + " " + target + " HTTP/1.1\r\nHost: lb\r\n\r\n");
      if (method.equals("HEAD")) {
        return head(c.readHead());
      }
      return c.read();
    }
  }

  /** Parses a response head, for HEAD requests (whose Content-Length announces no body). */
  private static RawClient.Res head(String head) {
    String[] lines = head.split("\r\n");
    Map<String, String> headers = new java.util.LinkedHashMap<>();
    for (int i = 1; i < lines.length; i++) {
      int colon = lines[i].indexOf(':');
      headers.put(
          lines[i].substring(0, colon).toLowerCase(java.util.Locale.ROOT),
          lines[i].substring(colon + 1).trim());
    }
    return new RawClient.Res(Integer.parseInt(lines[0].split(" ")[1]), headers, "");
  }

  private static void assertNoRpcHeaders(Map<String, String> headers) {
    assertThat(headers.keySet()).noneMatch(k -> k.startsWith("rpc-"));
  }

  @Test
  void getAndHeadOfTheHealthPathAnswer200WhileServingOnHttp1AndH2c() throws Exception {
    start(b -> b);
    RawClient.Res r = http1("GET", "/health");
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.body()).isEqualTo("SERVING\n");
    assertThat(r.headers())
        .containsEntry("content-type", "text/plain; charset=utf-8")
        .containsEntry("content-length", "8");
    assertNoRpcHeaders(r.headers());
    assertThat(http1("GET", "/health?probe=liveness").status())
        .as("the query is ignored")
        .isEqualTo(200);
    assertThat(http1("GET", "http://lb.example:8080/health").status())
        .as("the absolute form of the target, which RFC 9112 section 3.2.2 says servers accept")
        .isEqualTo(200);

    RawClient.Res h = http1("HEAD", "/health");
    assertThat(h.status()).isEqualTo(200);
    assertThat(h.headers()).containsEntry("content-length", "8");
    try (RawClient c = new RawClient(inbound.address().getPort())) {
      // HEAD sends no body: the next response on the connection follows the head directly
      c.send("HEAD /health HTTP/1.1\r\nHost: lb\r\n\r\nGET /health HTTP/1.1\r\nHost: lb\r\n\r\n");
      assertThat(head(c.readHead()).status()).isEqualTo(200);
      assertThat(c.read().body()).isEqualTo("SERVING\n");
    }

    try (H2cClient h2 = new H2cClient(inbound.address().getPort())) {
      H2cClient.Res r2 = h2.request(HttpMethod.GET, "/health");
      assertThat(r2.status()).isEqualTo(200);
      assertThat(r2.body()).isEqualTo("SERVING\n");
      assertNoRpcHeaders(r2.headers());
      H2cClient.Res h2head = h2.request(HttpMethod.HEAD, "/health");
      assertThat(h2head.status()).isEqualTo(200);
      assertThat(h2head.body()).isEmpty();
    }
    // the exchange ends once its answer is written, a moment after the client read it
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
    while (inbound.activeRequests() != 0 && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertThat(inbound.activeRequests()).isZero();
  }

  @Test
  void otherPathsAndMethodsAreAnsweredAsBefore() throws Exception {
    start(b -> b);
    for (String target : new String[] {"/healthz", "/health/", "/", "/Health"}) {
      RawClient.Res r = http1("GET", target);
      assertThat(r.status()).as(target).isEqualTo(404);
      assertThat(r.body()).isEqualTo("request method was GET but only POST is allowed\n");
    }
    assertThat(http1("PUT", "/health").status()).isEqualTo(404);
    try (H2cClient h2 = new H2cClient(inbound.address().getPort())) {
      assertThat(h2.request(HttpMethod.GET, "/healthz").status()).isEqualTo(404);
    }
  }

  @Test
  void postToTheHealthPathIsAYarpcCall() throws Exception {
    start(b -> b);
    try (RawClient c = new RawClient(inbound.address().getPort())) {
      c.send(RawClient.request("echo", 5).replace("POST / ", "POST /health ")).send("hello");
      RawClient.Res r = c.read();
      assertThat(r.status()).isEqualTo(200);
      assertThat(r.body()).isEqualTo("hello");
      assertThat(r.headers()).containsEntry("rpc-service", YarpcTestService.NAME);
    }
  }

  @Test
  void answers503FromTheMomentTheDispatcherBeginsToStopWhileCallsInFlightFinish() throws Exception {
    start(b -> b);
    HttpTransport clientTransport = HttpTransport.builder().eventLoopThreads(1).build();
    HttpOutbound out = clientTransport.singleOutbound(inbound.hostPort());
    out.start();
    try (H2cClient h2 = new H2cClient(inbound.address().getPort())) {
      CompletableFuture<Response> inFlight =
          out.call(
              io.yarpc.transport.Request.of(
                  io.yarpc.transport.RequestMeta.builder()
                      .caller("lb-test")
                      .service(YarpcTestService.NAME)
                      .procedure("slow")
                      .encoding("raw")
                      .deadline(io.yarpc.transport.Deadline.after(Duration.ofSeconds(30)))
                      .build(),
                  Body.empty()));
      assertThat(slowEntered.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(http1("GET", "/health").status()).isEqualTo(200);

      CompletableFuture<Void> stopping = CompletableFuture.runAsync(dispatcher::stop);
      RawClient.Res r = null;
      for (int i = 0; i < 1000; i++) {
        r = http1("GET", "/health");
        if (r.status() != 200) {
          break;
        }
        Thread.sleep(5);
      }
      assertThat(r.status()).isEqualTo(503);
      assertThat(r.body()).isEqualTo("NOT_SERVING\n");
      assertNoRpcHeaders(r.headers());
      assertThat(http1("HEAD", "/health").status()).isEqualTo(503);
      H2cClient.Res r2 = h2.request(HttpMethod.GET, "/health");
      assertThat(r2.status()).isEqualTo(503);
      assertThat(r2.body()).isEqualTo("NOT_SERVING\n");
      assertThat(inFlight).as("the call in flight is still running").isNotDone();
      assertThat(stopping).isNotDone();

      release.countDown();
      Response done = inFlight.get(10, TimeUnit.SECONDS);
      try {
        assertThat(new String(done.body().toByteArray(), UTF_8)).isEqualTo("done");
      } finally {
        done.body().release();
      }
      stopping.get(20, TimeUnit.SECONDS);
    } finally {
      out.stop();
      clientTransport.stop();
    }
  }

  @Test
  void aCustomPathMovesTheCheck() throws Exception {
    start(b -> b.healthPath("/ready"));
    RawClient.Res r = http1("GET", "/ready");
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.body()).isEqualTo("SERVING\n");
    assertThat(http1("GET", "/health").status()).isEqualTo(404);
  }

  @Test
  void turnedOffAGetOfTheHealthPathIsAnsweredAsBefore() throws Exception {
    start(HttpInbound.Builder::disableHealth);
    RawClient.Res r = http1("GET", "/health");
    assertThat(r.status()).isEqualTo(404);
    assertThat(r.body()).isEqualTo("request method was GET but only POST is allowed\n");
    try (H2cClient h2 = new H2cClient(inbound.address().getPort())) {
      assertThat(h2.request(HttpMethod.GET, "/health").status()).isEqualTo(404);
    }
  }

  @Test
  void theHealthPathIsValidated() {
    HttpInbound.Builder b = HttpTransport.create().inboundBuilder();
    assertThatThrownBy(() -> b.healthPath("health")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> b.healthPath("/health?x"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> b.healthPath("/he alth")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> b.healthPath(null)).isInstanceOf(NullPointerException.class);
  }
}
