package io.yarpc.observability.tracing;

import static io.yarpc.observability.tracing.TracingTestSupport.span;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.yarpc.CallOptions;
import io.yarpc.ClientConfig;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.errors.ApplicationErrorMeta;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.ClientStream;
import io.yarpc.transport.DeadlinePolicy;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.ServerStream;
import io.yarpc.transport.StreamMessage;
import io.yarpc.transport.grpc.GrpcInbound;
import io.yarpc.transport.grpc.GrpcTransport;
import io.yarpc.transport.http.HttpInbound;
import io.yarpc.transport.http.HttpTransport;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Streams and oneway calls get their spans too, and failures are recorded as the class comment of
 * YarpcTracing says: the YARPC code as {@code rpc.status_code} and {@code error.type}, status {@code ERROR}
 * on the client for every failure and on the server only for the server's faults.
 */
class CallShapesAndErrorsTest {
  private static final AttributeKey<String> STATUS_CODE = AttributeKey.stringKey("rpc.status_code");
  private static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");
  private static final AttributeKey<String> RPC_TYPE = AttributeKey.stringKey("yarpc.rpc_type");

  private final TracingTestSupport otel = new TracingTestSupport();
  private final CountDownLatch onewayHandled = new CountDownLatch(1);
  private final CountDownLatch releaseSlow = new CountDownLatch(1);
  private ClientConfig http;
  private ClientConfig grpc;

  @BeforeEach
  void start() {
    // a 1 s cap on deadlines: "slow" runs past the server's own deadline, before the client gives
    // up
    HttpInbound httpInbound =
        HttpTransport.create()
            .inboundBuilder()
            .deadlinePolicy(DeadlinePolicy.builder().maxTimeout(Duration.ofSeconds(1)).build())
            .build();
    GrpcInbound grpcInbound = GrpcTransport.create().inbound(new InetSocketAddress("127.0.0.1", 0));
    Dispatcher server = otel.start(Dispatcher.builder("server").inbound(httpInbound, grpcInbound));
    server.register(
        Raw.onewayProcedure("ping", body -> onewayHandled.countDown()),
        Raw.procedure(
            "not-found",
            body -> {
              throw YarpcException.of(Code.NOT_FOUND, "no such key");
            }),
        Raw.procedure(
            "internal",
            body -> {
              throw YarpcException.of(Code.INTERNAL, "broken");
            }),
        Raw.procedure(
            "bug",
            body -> {
              throw new IllegalStateException("boom");
            }),
        Procedure.builder("app-error")
            .unary(
                request ->
                    CompletableFuture.completedFuture(
                        Response.builder()
                            .applicationError(new ApplicationErrorMeta(null, "KeyNotFound", "k"))
                            .build()))
            .build(),
        Raw.procedure(
            "slow",
            body -> {
              try {
                releaseSlow.await(10, TimeUnit.SECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              return body;
            }),
        Procedure.builder("chat").streaming(CallShapesAndErrorsTest::echoStream).build());

    Dispatcher client =
        otel.start(
            Dispatcher.builder("client")
                .outbound(
                    "server",
                    Outbounds.builder()
                        .unary(HttpTransport.create().singleOutbound(httpInbound.hostPort()))
                        .oneway(HttpTransport.create().singleOutbound(httpInbound.hostPort()))
                        .build())
                .outbound(
                    "grpc",
                    Outbounds.builder().serviceName("server").stream(
                            GrpcTransport.create()
                                .singleOutbound("127.0.0.1:" + grpcInbound.port()))
                        .build()));
    http = client.clientConfig("server");
    grpc = client.clientConfig("grpc");
  }

  @AfterEach
  void stop() {
    releaseSlow.countDown();
    otel.close();
  }

  private static CompletableFuture<Void> echoStream(ServerStream stream) {
    try {
      for (StreamMessage m; (m = stream.receive().join()) != null; ) {
        byte[] bytes = m.body().toByteArray();
        m.release();
        stream.send(StreamMessage.of(Body.of(bytes))).join();
      }
      return CompletableFuture.completedFuture(null);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private static RequestMeta chat() {
    return RequestMeta.builder().procedure("chat").encoding(Raw.ENCODING).build();
  }

  @Test
  void aStreamHasAClientAndAServerSpanThatEndWithIt() throws Exception {
    ClientStream stream = grpc.callStream(chat()).join();
    stream.send(StreamMessage.of(Body.of("hi".getBytes(UTF_8)))).join();
    stream.halfClose();
    StreamMessage reply = stream.receive().join();
    assertThat(new String(reply.body().toByteArray(), UTF_8)).isEqualTo("hi");
    reply.release();
    assertThat(otel.exporter.getFinishedSpanItems())
        .as("the client span lasts until the end of the stream is received")
        .noneMatch(s -> s.getKind() == SpanKind.CLIENT);
    assertThat(stream.receive().join()).isNull();

    List<SpanData> spans = otel.awaitSpans(2);
    SpanData client = span(spans, SpanKind.CLIENT, "server/chat");
    SpanData server = span(spans, SpanKind.SERVER, "server/chat");
    assertThat(server.getParentSpanId()).isEqualTo(client.getSpanId());
    for (SpanData s : spans) {
      assertThat(s.getAttributes().get(RPC_TYPE)).isEqualTo("streaming");
      assertThat(s.getAttributes().get(STATUS_CODE)).isEqualTo("OK");
      assertThat(s.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
    }
  }

  @Test
  void aCancelledStreamEndsItsClientSpanAsCancelled() throws Exception {
    ClientStream stream = grpc.callStream(chat()).join();
    stream.send(StreamMessage.of(Body.of("hi".getBytes(UTF_8)))).join();
    stream.receive().join().release();
    stream.cancel();

    List<SpanData> spans = otel.awaitSpans(2);
    SpanData client = span(spans, SpanKind.CLIENT, "server/chat");
    assertThat(client.getAttributes().get(STATUS_CODE)).isEqualTo("CANCELLED");
    assertThat(client.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    SpanData server = span(spans, SpanKind.SERVER, "server/chat");
    assertThat(server.getAttributes().get(STATUS_CODE)).isEqualTo("CANCELLED");
    assertThat(server.getStatus().getStatusCode())
        .as("a caller's cancellation is not the server's fault")
        .isEqualTo(StatusCode.UNSET);
  }

  @Test
  void aOnewayCallHasAClientAndAServerSpan() throws Exception {
    RawClient.of(http)
        .callOneway("ping", "x".getBytes(UTF_8), CallOptions.timeout(Duration.ofSeconds(5)))
        .join();
    assertThat(onewayHandled.await(5, TimeUnit.SECONDS)).isTrue();

    List<SpanData> spans = otel.awaitSpans(2);
    SpanData client = span(spans, SpanKind.CLIENT, "server/ping");
    SpanData server = span(spans, SpanKind.SERVER, "server/ping");
    assertThat(server.getParentSpanId()).isEqualTo(client.getSpanId());
    assertThat(spans)
        .allSatisfy(s -> assertThat(s.getAttributes().get(RPC_TYPE)).isEqualTo("oneway"));
  }

  private List<SpanData> fail(String procedure, Code expected, Duration timeout) throws Exception {
    Throwable t =
        catchThrowable(
            () ->
                RawClient.of(http)
                    .call(procedure, new byte[0], CallOptions.timeout(timeout))
                    .join());
    assertThat(YarpcException.from(t).code()).isEqualTo(expected);
    return otel.awaitSpans(2);
  }

  @Test
  void aCallersFaultIsAnErrorOnTheClientOnly() throws Exception {
    List<SpanData> spans = fail("not-found", Code.NOT_FOUND, Duration.ofSeconds(5));
    SpanData client = span(spans, SpanKind.CLIENT, "server/not-found");
    SpanData server = span(spans, SpanKind.SERVER, "server/not-found");
    for (SpanData s : spans) {
      assertThat(s.getAttributes().get(STATUS_CODE)).isEqualTo("NOT_FOUND");
      assertThat(s.getAttributes().get(ERROR_TYPE)).isEqualTo("NOT_FOUND");
    }
    assertThat(client.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    assertThat(client.getStatus().getDescription()).contains("no such key");
    assertThat(server.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
  }

  @Test
  void aServersFaultIsAnErrorOnBothSides() throws Exception {
    List<SpanData> spans = fail("internal", Code.INTERNAL, Duration.ofSeconds(5));
    for (SpanData s : spans) {
      assertThat(s.getAttributes().get(STATUS_CODE)).isEqualTo("INTERNAL");
      assertThat(s.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    }
  }

  @Test
  void aHandlersUnexpectedExceptionIsRecordedOnTheServerSpan() throws Exception {
    List<SpanData> spans = fail("bug", Code.UNKNOWN, Duration.ofSeconds(5));
    SpanData server = span(spans, SpanKind.SERVER, "server/bug");
    assertThat(server.getAttributes().get(STATUS_CODE)).isEqualTo("UNKNOWN");
    assertThat(server.getAttributes().get(ERROR_TYPE)).isEqualTo("java.lang.IllegalStateException");
    assertThat(server.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    assertThat(server.getEvents()).anyMatch(e -> e.getName().equals("exception"));
    SpanData client = span(spans, SpanKind.CLIENT, "server/bug");
    assertThat(client.getAttributes().get(STATUS_CODE)).isEqualTo("UNKNOWN");
    assertThat(client.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
  }

  @Test
  void anApplicationErrorIsMarkedAndAnErrorForTheCaller() throws Exception {
    RawClient.of(http).call("app-error", new byte[0], CallOptions.timeout(Duration.ofSeconds(5)));
    List<SpanData> spans = otel.awaitSpans(2);
    for (SpanData s : spans) {
      assertThat(s.getAttributes().get(AttributeKey.booleanKey("yarpc.application_error")))
          .isTrue();
      assertThat(s.getAttributes().get(AttributeKey.stringKey("yarpc.application_error.name")))
          .isEqualTo("KeyNotFound");
      assertThat(s.getAttributes().get(ERROR_TYPE)).isEqualTo("KeyNotFound");
    }
    SpanData server = span(spans, SpanKind.SERVER, "server/app-error");
    assertThat(server.getAttributes().get(STATUS_CODE))
        .as("the handler gave no code")
        .isEqualTo("OK");
    assertThat(server.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
    SpanData client = span(spans, SpanKind.CLIENT, "server/app-error");
    assertThat(client.getAttributes().get(STATUS_CODE))
        .as("the HTTP inbound sends code 2 for an application error without one, as yarpc-go does")
        .isEqualTo("UNKNOWN");
    assertThat(client.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
  }

  @Test
  void theServerSpanEndsAtTheDeadlineEvenIfTheHandlerRunsOn() throws Exception {
    List<SpanData> spans = fail("slow", Code.DEADLINE_EXCEEDED, Duration.ofSeconds(10));
    assertThat(releaseSlow.getCount()).as("the handler is still running").isEqualTo(1);
    for (SpanData s : spans) {
      assertThat(s.getAttributes().get(STATUS_CODE)).as("%s", s).isEqualTo("DEADLINE_EXCEEDED");
      assertThat(s.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    }
    releaseSlow.countDown();
  }

  @Test
  void aClientThatGivesUpAtItsDeadlineEndsItsSpanAsDeadlineExceeded() throws Exception {
    // the client's deadline (300 ms) comes before the server's cap (1 s): the call path cancels the
    // outbound's future, which the span reads as the deadline passing, not as a cancellation
    List<SpanData> spans = fail("slow", Code.DEADLINE_EXCEEDED, Duration.ofMillis(300));
    SpanData client = span(spans, SpanKind.CLIENT, "server/slow");
    assertThat(client.getAttributes().get(STATUS_CODE)).isEqualTo("DEADLINE_EXCEEDED");
    assertThat(client.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    releaseSlow.countDown();
  }
}
