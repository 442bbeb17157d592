package io.yarpc.transport.http;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.yarpc.errors.ApplicationErrorMeta;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.peer.SinglePeerChooser;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Headers;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The outbound against a plain HTTP/1.1 server that is not YARPC and not Netty ({@link PlainHttpServer}):
 * the exact request on the wire, and how every kind of response is read back — the status-code fallback
 * table (a bare 504 is {@code deadline-exceeded}), {@code Rpc-Error-*}, both-response-error, application
 * errors, service mismatch — plus connection failures, deadlines, cancellation and keep-alive reuse.
 */
class OutboundWireTest {
  private final HttpTransport transport = HttpTransport.builder().eventLoopThreads(1).build();
  private PlainHttpServer server;
  private HttpOutbound outbound;

  @AfterEach
  void stop() throws Exception {
    if (outbound != null) {
      outbound.stop();
    }
    transport.stop();
    if (server != null) {
      server.close();
    }
  }

  private HttpOutbound serve(Function<PlainHttpServer.Received, byte[]> responder)
      throws Exception {
    server = new PlainHttpServer(responder);
    outbound = transport.singleOutbound(server.hostPort());
    outbound.start();
    return outbound;
  }

  private static RequestMeta meta(String procedure) {
    return RequestMeta.builder()
        .caller("caller")
        .service("svc")
        .procedure(procedure)
        .encoding("raw")
        .deadline(Deadline.after(Duration.ofSeconds(10)))
        .build();
  }

  private static <T> T await(CompletableFuture<T> f) throws Exception {
    return f.get(10, TimeUnit.SECONDS);
  }

  private static YarpcException failure(CompletableFuture<?> f) throws Exception {
    try {
      Object v = f.get(10, TimeUnit.SECONDS);
      if (v instanceof Response) {
        ((Response) v).body().release();
      }
      return fail("expected a failure, got " + v);
    } catch (ExecutionException e) {
      assertThat(e.getCause()).isInstanceOf(YarpcException.class);
      return (YarpcException) e.getCause();
    }
  }

  private static String text(Response r) {
    try {
      return new String(r.body().toByteArray(), UTF_8);
    } finally {
      r.body().release();
    }
  }

  private static final byte[] OK = PlainHttpServer.response("200 OK", "ok", "Rpc-Status: success");

  @Test
  void requestOnTheWireMatchesYarpcGo() throws Exception {
    server = new PlainHttpServer(r -> OK);
    outbound =
        transport
            .singleOutboundBuilder("http://" + server.hostPort() + "/rpc/v1")
            .header("x-extra", "extra-value")
            .build();
    outbound.start();
    RequestMeta meta =
        RequestMeta.builder()
            .caller("caller")
            .service("svc")
            .procedure("Echo::echo")
            .encoding("json")
            .shardKey("sk")
            .routingKey("rk")
            .routingDelegate("rd")
            .callerProcedure("cp")
            .headers(
                Headers.of(
                    "Foo-BAR",
                    "Baz",
                    "uber-trace-id",
                    "trace",
                    "X-Forwarded-For",
                    "1.2.3.4",
                    "rpc-routing-zone",
                    "zone",
                    ":authority",
                    "dropped",
                    "empty",
                    ""))
            .propagationHeaders(
                Headers.of(
                    "uber-trace-id",
                    "from-tracer",
                    "traceparent",
                    "tp",
                    "uberctx-k",
                    "v",
                    "rpc-caller",
                    "not-written",
                    "bad key",
                    "not-written"))
            .deadline(Deadline.after(Duration.ofSeconds(5)))
            .build();
    assertThat(text(await(outbound.call(Request.of(meta, Body.of("{}".getBytes(UTF_8)))))))
        .isEqualTo("ok");

    PlainHttpServer.Received r = server.received.take();
    assertThat(r.requestLine()).isEqualTo("POST /rpc/v1 HTTP/1.1");
    assertThat(r.headerNames())
        .containsExactlyInAnyOrder(
            "Host",
            "X-Extra",
            "Rpc-Caller",
            "Rpc-Service",
            "Rpc-Procedure",
            "Context-TTL-MS",
            "Rpc-Shard-Key",
            "Rpc-Routing-Key",
            "Rpc-Routing-Delegate",
            "Rpc-Caller-Procedure",
            "Rpc-Encoding",
            "Rpc-Accepts-Both-Response-Error",
            "Rpc-Header-Foo-Bar",
            "Uber-Trace-Id",
            "Traceparent",
            "Uberctx-K",
            "X-Forwarded-For",
            "Rpc-Routing-Zone",
            "Rpc-Header-Empty",
            "Content-Length");
    assertThat(r.header("Host")).isEqualTo(server.hostPort());
    assertThat(r.header("X-Extra")).isEqualTo("extra-value");
    assertThat(r.header("Rpc-Caller")).isEqualTo("caller");
    assertThat(r.header("Rpc-Service")).isEqualTo("svc");
    assertThat(r.header("Rpc-Procedure")).isEqualTo("Echo::echo");
    assertThat(Long.parseLong(r.header("Context-TTL-MS"))).isBetween(0L, 5000L);
    assertThat(r.header("Rpc-Shard-Key")).isEqualTo("sk");
    assertThat(r.header("Rpc-Routing-Key")).isEqualTo("rk");
    assertThat(r.header("Rpc-Routing-Delegate")).isEqualTo("rd");
    assertThat(r.header("Rpc-Caller-Procedure")).isEqualTo("cp");
    assertThat(r.header("Rpc-Encoding")).isEqualTo("json");
    assertThat(r.header("Rpc-Accepts-Both-Response-Error")).isEqualTo("true");
    assertThat(r.header("Rpc-Header-Foo-Bar")).isEqualTo("Baz");
    // propagation headers go plain, as yarpc-go's tracer writes them, and win over an application
    // header of the same name; one naming a header the transport owns is not written
    assertThat(r.header("Uber-Trace-Id")).isEqualTo("from-tracer");
    assertThat(r.header("Traceparent")).isEqualTo("tp");
    assertThat(r.header("Uberctx-K")).isEqualTo("v");
    assertThat(r.header("X-Forwarded-For")).isEqualTo("1.2.3.4");
    assertThat(r.header("Rpc-Routing-Zone")).isEqualTo("zone");
    assertThat(r.header("Rpc-Header-Empty")).isEmpty();
    assertThat(r.header("Content-Length")).isEqualTo("2");
    assertThat(new String(r.body(), UTF_8)).isEqualTo("{}");
  }

  @Test
  void optionalHeadersAreLeftOutWhenEmpty() throws Exception {
    serve(r -> OK);
    RequestMeta meta =
        RequestMeta.builder()
            .caller("c")
            .service("s")
            .procedure("p")
            .deadline(Deadline.after(Duration.ofSeconds(5)))
            .build();
    text(await(outbound.call(Request.of(meta, Body.empty()))));
    PlainHttpServer.Received r = server.received.take();
    assertThat(r.requestLine()).isEqualTo("POST / HTTP/1.1");
    assertThat(r.headerNames())
        .containsExactlyInAnyOrder(
            "Host",
            "Rpc-Caller",
            "Rpc-Service",
            "Rpc-Procedure",
            "Context-TTL-MS",
            "Rpc-Accepts-Both-Response-Error",
            "Content-Length");
    assertThat(r.header("Content-Length")).isEqualTo("0");
  }

  @Test
  void bareGatewayTimeoutIsDeadlineExceeded() throws Exception {
    serve(r -> PlainHttpServer.response("504 Gateway Timeout", "upstream timed out\n"));
    YarpcException e = failure(outbound.call(Request.of(meta("p"), Body.empty())));
    assertThat(e.code()).isEqualTo(Code.DEADLINE_EXCEEDED);
    assertThat(e.getMessage()).isEqualTo("upstream timed out");
    assertThat(e.response()).isNull();
  }

  @Test
  void statusCodeFallbackTable() throws Exception {
    int[] statuses = {400, 401, 403, 404, 409, 418, 422, 429, 499, 500, 501, 502, 503, 504, 302};
    Code[] codes = {
      Code.INVALID_ARGUMENT,
      Code.UNAUTHENTICATED,
      Code.PERMISSION_DENIED,
      Code.NOT_FOUND,
      Code.ABORTED,
      Code.INVALID_ARGUMENT,
      Code.INVALID_ARGUMENT,
      Code.RESOURCE_EXHAUSTED,
      Code.CANCELLED,
      Code.UNKNOWN,
      Code.UNIMPLEMENTED,
      Code.UNKNOWN,
      Code.UNAVAILABLE,
      Code.DEADLINE_EXCEEDED,
      Code.INVALID_ARGUMENT
    };
    serve(r -> PlainHttpServer.response(new String(r.body(), UTF_8) + " Whatever", "status text"));
    for (int i = 0; i < statuses.length; i++) {
      YarpcException e =
          failure(
              outbound.call(
                  Request.of(meta("p"), Body.of(Integer.toString(statuses[i]).getBytes(UTF_8)))));
      assertThat(e.code()).as("status %d", statuses[i]).isEqualTo(codes[i]);
      assertThat(e.getMessage()).isEqualTo("status text");
    }
  }

  @Test
  void errorCodeHeaderWinsOverStatus() throws Exception {
    serve(
        r ->
            PlainHttpServer.response(
                "500 Internal Server Error",
                "no such thing\n",
                "Rpc-Error-Code: not-found",
                "Rpc-Error-Name: Missing",
                "Content-Type: text/plain; charset=utf8"));
    YarpcException e = failure(outbound.call(Request.of(meta("p"), Body.empty())));
    assertThat(e.code()).isEqualTo(Code.NOT_FOUND);
    assertThat(e.name()).isEqualTo("Missing");
    assertThat(e.getMessage()).isEqualTo("no such thing");
  }

  @Test
  void bothResponseAndError() throws Exception {
    serve(
        r ->
            PlainHttpServer.response(
                "409 Conflict",
                "partial body",
                "Rpc-Both-Response-Error: true",
                "Rpc-Error-Code: aborted",
                "Rpc-Error-Message: it clashed",
                "Rpc-Status: error",
                "Rpc-Header-Extra: e"));
    YarpcException e = failure(outbound.call(Request.of(meta("p"), Body.empty())));
    assertThat(e.code()).isEqualTo(Code.ABORTED);
    assertThat(e.getMessage()).isEqualTo("it clashed");
    assertThat(e.details()).isNull();
    Response carried = e.response();
    assertThat(carried).isNotNull();
    assertThat(carried.isApplicationError()).isTrue();
    assertThat(carried.headers().get("extra")).isEqualTo("e");
    assertThat(text(carried)).isEqualTo("partial body");
  }

  @Test
  void bothResponseAndErrorWithDetails() throws Exception {
    serve(
        r ->
            PlainHttpServer.response(
                "400 Bad Request",
                "DETAILS",
                "Rpc-Both-Response-Error: true",
                "Rpc-Error-Code: invalid-argument",
                "Rpc-Error-Message: bad",
                "Grpc-Status-Details-Bin: DETAILS"));
    YarpcException e = failure(outbound.call(Request.of(meta("p"), Body.empty())));
    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(e.details()).isEqualTo("DETAILS".getBytes(UTF_8));
    assertThat(e.response().body().length()).isZero();
    e.response().body().release();
  }

  @Test
  void bothResponseErrorWithSuccessStatusIsASuccess() throws Exception {
    serve(r -> PlainHttpServer.response("200 OK", "fine", "Rpc-Both-Response-Error: true"));
    assertThat(text(await(outbound.call(Request.of(meta("p"), Body.empty()))))).isEqualTo("fine");
  }

  @Test
  void applicationErrorAndResponseHeaders() throws Exception {
    serve(
        r ->
            PlainHttpServer.response(
                "200 OK",
                "app failure",
                "Rpc-Status: error",
                "Rpc-Application-Error-Code: 6",
                "Rpc-Application-Error-Name: AlreadyThere",
                "Rpc-Application-Error-Details: it exists",
                "Rpc-Header-Foo: bar",
                "rpc-header-lower: v",
                "X-Request-Id: rid",
                "Unrelated: dropped",
                "Rpc-Service: svc"));
    Response r = await(outbound.call(Request.of(meta("p"), Body.empty())));
    assertThat(r.isApplicationError()).isTrue();
    assertThat(r.applicationErrorMeta())
        .isEqualTo(new ApplicationErrorMeta(Code.ALREADY_EXISTS, "AlreadyThere", "it exists"));
    assertThat(r.headers().asMap())
        .containsOnly(
            java.util.Map.entry("foo", "bar"),
            java.util.Map.entry("lower", "v"),
            java.util.Map.entry("x-request-id", "rid"));
    assertThat(text(r)).isEqualTo("app failure");
  }

  @Test
  void serviceMismatchIsInternal() throws Exception {
    serve(r -> PlainHttpServer.response("200 OK", "x", "Rpc-Service: other"));
    YarpcException e = failure(outbound.call(Request.of(meta("p"), Body.empty())));
    assertThat(e.code()).isEqualTo(Code.INTERNAL);
    assertThat(e.getMessage())
        .isEqualTo(
            "service name sent from the request does not match the service name "
                + "received in the response, sent \"svc\", got: \"other\"");
  }

  @Test
  void oneway() throws Exception {
    serve(
        r ->
            new String(r.body(), UTF_8).equals("fail")
                ? PlainHttpServer.response("503 Service Unavailable", "busy\n")
                : PlainHttpServer.response("200 OK", "", "Rpc-Status: success"));
    assertThat(await(outbound.callOneway(Request.of(meta("p"), Body.of("go".getBytes(UTF_8))))))
        .isNull();
    YarpcException e =
        failure(outbound.callOneway(Request.of(meta("p"), Body.of("fail".getBytes(UTF_8)))));
    assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(e.getMessage()).isEqualTo("busy");
  }

  @Test
  void connectionRefusedIsUnavailable() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    // fail-fast: the transport's own error for a refused connection (a waiting chooser, the
    // default,
    // waits for the peer until the deadline: examples' ClientBeforeServerTest)
    outbound =
        transport.outbound(
            SinglePeerChooser.builder(transport, "127.0.0.1:" + port).failFast(true).build());
    outbound.start();
    YarpcException e = failure(outbound.call(Request.of(meta("p"), Body.of(new byte[100]))));
    assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(e.getMessage()).startsWith("cannot connect to peer 127.0.0.1:" + port + ": ");
  }

  @Test
  void connectionResetMidResponseIsUnavailable() throws Exception {
    serve(
        r ->
            "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\nonly part"
                .getBytes(UTF_8));
    YarpcException e = failure(outbound.call(Request.of(meta("p"), Body.empty())));
    assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(e.getMessage())
        .isEqualTo(
            "connection to peer " + server.hostPort() + " closed before the response was complete");
  }

  @Test
  void localDeadlineIsDeadlineExceeded() throws Exception {
    serve(r -> null); // never answers
    RequestMeta meta =
        meta("slow").toBuilder().deadline(Deadline.after(Duration.ofMillis(50))).build();
    // the deadline is core's call path (the outbound arms no timer of its own); it cancels the
    // exchange
    YarpcException e = failure(calls().call(Request.of(meta, Body.of(new byte[10]))));
    assertThat(e.code()).isEqualTo(Code.DEADLINE_EXCEEDED);
    assertThat(e.getMessage())
        .startsWith("client timeout for procedure \"slow\" of service \"svc\" after ");
  }

  /** The outbound behind core's call path (validation, the deadline), as a dispatcher's client uses it. */
  private io.yarpc.ClientConfig calls() {
    return io.yarpc.ClientConfig.of(
        "caller", "svc", io.yarpc.Outbounds.builder().unary(outbound).build());
  }

  @Test
  void missingDeadlineIsInvalidArgument() throws Exception {
    serve(r -> OK);
    RequestMeta meta = meta("p").toBuilder().deadline(null).build();
    YarpcException e = failure(calls().call(Request.of(meta, Body.of(new byte[10]))));
    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(e.getMessage()).startsWith("missing TTL: the call to procedure \"p\"");
    assertThat(server.received).as("nothing was sent").isEmpty();
  }

  @Test
  void cancellingAbortsTheRequest() throws Exception {
    serve(r -> null); // never answers
    CompletableFuture<Response> f = outbound.call(Request.of(meta("p"), Body.of(new byte[10])));
    int firstPort = server.received.take().remotePort(); // the request reached the server
    assertThat(f.cancel(false)).isTrue();
    // the aborted connection is closed, not reused: the next call arrives on another connection
    CompletableFuture<Response> f2 = outbound.call(Request.of(meta("p"), Body.of(new byte[1])));
    assertThat(server.received.take().remotePort()).isNotEqualTo(firstPort);
    f2.cancel(false);
  }

  @Test
  void keepAliveConnectionsAreReused() throws Exception {
    serve(r -> OK);
    for (int i = 0; i < 5; i++) {
      text(await(outbound.call(Request.of(meta("p"), Body.of(new byte[i])))));
    }
    List<Integer> ports = new java.util.ArrayList<>();
    server.received.forEach(r -> ports.add(r.remotePort()));
    assertThat(ports).hasSize(5);
    assertThat(ports).containsOnly(ports.get(0));
  }

  @Test
  void errorResponsesKeepTheConnection() throws Exception {
    serve(
        r ->
            new String(r.body(), UTF_8).equals("fail")
                ? PlainHttpServer.response("404 Not Found", "nope\n", "Rpc-Error-Code: not-found")
                : OK);
    for (int i = 0; i < 3; i++) {
      assertThat(
              failure(outbound.call(Request.of(meta("p"), Body.of("fail".getBytes(UTF_8))))).code())
          .isEqualTo(Code.NOT_FOUND);
      text(await(outbound.call(Request.of(meta("p"), Body.empty()))));
    }
    assertThat(
            server.received.stream().map(PlainHttpServer.Received::remotePort).distinct().count())
        .isEqualTo(1);
  }

  @Test
  void everyLeaseIsFinished() throws Exception {
    serve(r -> new String(r.body(), UTF_8).equals("hang") ? null : OK);
    io.yarpc.peer.SinglePeerChooser chooser = (io.yarpc.peer.SinglePeerChooser) outbound.chooser();
    text(await(outbound.call(Request.of(meta("p"), Body.empty()))));
    CompletableFuture<Response> hanging =
        outbound.call(Request.of(meta("p"), Body.of("hang".getBytes(UTF_8))));
    server.received.take();
    server.received.take();
    assertThat(chooser.pendingRequests()).isEqualTo(1);
    hanging.cancel(false);
    RequestMeta shortDeadline =
        meta("p").toBuilder().deadline(Deadline.after(Duration.ofMillis(30))).build();
    failure(calls().call(Request.of(shortDeadline, Body.of("hang".getBytes(UTF_8)))));
    for (int i = 0; i < 1000 && chooser.pendingRequests() > 0; i++) {
      Thread.sleep(5);
    }
    assertThat(chooser.pendingRequests()).isZero();
  }

  @Test
  void aConnectionClosedByTheServerIsReplaced() throws Exception {
    serve(r -> OK);
    text(await(outbound.call(Request.of(meta("p"), Body.empty()))));
    int first = server.received.take().remotePort();
    server.dropConnections();
    // The pooled connection is dead. If the outbound has noticed, the next call goes out on a new
    // connection; if it has not, writing fails (and the call is retried on a new connection) or the
    // connection closes before any response, which fails the call with unavailable (as yarpc-go, a
    // POST is not replayed once written). Either way the call after it succeeds on a new
    // connection.
    CompletableFuture<Response> next = outbound.call(Request.of(meta("p"), Body.empty()));
    try {
      text(next.get(10, TimeUnit.SECONDS));
    } catch (ExecutionException e) {
      assertThat(((YarpcException) e.getCause()).code()).isEqualTo(Code.UNAVAILABLE);
    }
    text(await(outbound.call(Request.of(meta("p"), Body.empty()))));
    PlainHttpServer.Received last = null;
    for (PlainHttpServer.Received r; (r = server.received.poll()) != null; ) {
      last = r;
    }
    assertThat(last.remotePort()).isNotEqualTo(first);
  }

  @Test
  void responseBodyLimit() throws Exception {
    server = new PlainHttpServer(r -> PlainHttpServer.response("200 OK", "x".repeat(2000)));
    outbound = transport.singleOutboundBuilder(server.hostPort()).maxResponseBodySize(1000).build();
    outbound.start();
    YarpcException e = failure(outbound.call(Request.of(meta("p"), Body.empty())));
    assertThat(e.code()).isEqualTo(Code.RESOURCE_EXHAUSTED);
    assertThat(e.getMessage())
        .isEqualTo(
            "response body from peer "
                + server.hostPort()
                + " is larger than the limit of 1000 bytes");
  }

  @Test
  void chunkedResponseBodyLimit() throws Exception {
    server =
        new PlainHttpServer(
            r ->
                ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                        + "3e8\r\n"
                        + "x".repeat(1000)
                        + "\r\n3e8\r\n"
                        + "y".repeat(1000)
                        + "\r\n0\r\n\r\n")
                    .getBytes(UTF_8));
    outbound = transport.singleOutboundBuilder(server.hostPort()).maxResponseBodySize(1500).build();
    outbound.start();
    YarpcException e = failure(outbound.call(Request.of(meta("p"), Body.empty())));
    assertThat(e.code()).isEqualTo(Code.RESOURCE_EXHAUSTED);
  }

  @Test
  void chunkedResponseIsAggregated() throws Exception {
    serve(
        r ->
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
                .getBytes(UTF_8));
    assertThat(text(await(outbound.call(Request.of(meta("p"), Body.empty())))))
        .isEqualTo("hello world");
  }

  @Test
  void headerValuesCarryUtf8() throws Exception {
    serve(r -> OK);
    RequestMeta meta = meta("p").toBuilder().headers(Headers.of("greeting", "grüße")).build();
    text(await(outbound.call(Request.of(meta, Body.empty()))));
    PlainHttpServer.Received r = server.received.take();
    String raw = r.header("Rpc-Header-Greeting");
    assertThat(new String(raw.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1), UTF_8))
        .isEqualTo("grüße");
  }
}
