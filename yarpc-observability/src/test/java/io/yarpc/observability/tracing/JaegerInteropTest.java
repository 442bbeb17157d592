package io.yarpc.observability.tracing;

import static io.yarpc.observability.tracing.TracingTestSupport.span;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.baggage.Baggage;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.yarpc.CallOptions;
import io.yarpc.ClientConfig;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.transport.Headers;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.UnaryOutbound;
import io.yarpc.transport.http.HttpInbound;
import io.yarpc.transport.http.HttpTransport;
import io.yarpc.transport.tchannel.TChannelInbound;
import io.yarpc.transport.tchannel.TChannelOutbound;
import io.yarpc.transport.tchannel.TChannelTransport;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * yarpc-go callers with a Jaeger tracer send {@code uber-trace-id} (64-bit trace ids from older
 * clients) and {@code uberctx-*} baggage: as plain HTTP headers, and over TChannel as {@code $tracing$}
 * arg2 headers. Their trace is continued, and the call the handler makes downstream carries it on in
 * Jaeger's format, which a yarpc-go service reads.
 */
class JaegerInteropTest {
  /** A 64-bit trace id as jaeger-client-go writes it, a span id, no parent, sampled. */
  private static final String TRACE_64 = "5f4e3d2c1b0a9988";

  private static final String SPAN = "1122334455667788";
  private static final String UBER_TRACE_ID = TRACE_64 + ":" + SPAN + ":0:1";
  private static final String TRACE_128 = "0000000000000000" + TRACE_64;

  private final TracingTestSupport otel = new TracingTestSupport();
  private final AtomicReference<Headers> downstreamSaw = new AtomicReference<>();
  private final AtomicReference<String> relayBaggage = new AtomicReference<>();

  @AfterEach
  void stop() {
    otel.close();
  }

  /** A service without tracing that records the propagation headers it receives. */
  private void downstream(Inbound inbound) {
    Dispatcher d = otel.startPlain(Dispatcher.builder("downstream").inbound(inbound));
    d.register(
        Raw.procedure(
            "record",
            body -> {
              downstreamSaw.set(io.yarpc.Call.current().meta().propagationHeaders());
              return body;
            }));
  }

  /** The traced service under test: its "relay" handler calls downstream "record". */
  private Dispatcher relay(
      Inbound inbound, UnaryOutbound toDownstream, Function<Dispatcher.Builder, Dispatcher> start) {
    Dispatcher d =
        start.apply(
            Dispatcher.builder("relay")
                .inbound(inbound)
                .outbound("downstream", Outbounds.unary(toDownstream)));
    RawClient client = RawClient.of(d.clientConfig("downstream"));
    d.register(
        Raw.procedure(
            "relay",
            body -> {
              relayBaggage.set(Baggage.current().getEntryValue("tenant"));
              return client.call("record", body, CallOptions.DEFAULT).join();
            }));
    return d;
  }

  @Test
  void anUberTraceIdHeaderOverHttpIsContinuedAndPassedOnInJaegerFormat() throws Exception {
    HttpInbound downstreamInbound = HttpTransport.create().inbound();
    downstream(downstreamInbound);
    HttpInbound relayInbound = HttpTransport.create().inbound();
    relay(
        relayInbound,
        HttpTransport.create().singleOutbound(downstreamInbound.hostPort()),
        otel::start);

    // what yarpc-go's HTTP outbound sends: Rpc-* headers and the tracer's headers, plain
    HttpResponse<String> response =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://" + relayInbound.hostPort() + "/"))
                    .header("Rpc-Caller", "go-caller")
                    .header("Rpc-Service", "relay")
                    .header("Rpc-Procedure", "relay")
                    .header("Rpc-Encoding", "raw")
                    .header("Context-TTL-MS", "10000")
                    .header("Uber-Trace-Id", UBER_TRACE_ID)
                    .header("Uberctx-Tenant", "t1")
                    .POST(HttpRequest.BodyPublishers.ofString("x"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).isEqualTo(200);

    assertContinuedAndPassedOn(true);
  }

  @Test
  void tracingHeadersOverTChannelAreContinuedAndPassedOnInJaegerFormat() throws Exception {
    TChannelInbound downstreamInbound = TChannelTransport.of("downstream").inbound();
    downstream(downstreamInbound);
    TChannelInbound relayInbound = TChannelTransport.of("relay").inbound();
    relay(
        relayInbound,
        TChannelTransport.of("relay").singleOutbound(downstreamInbound.hostPort()),
        otel::start);

    // what yarpc-go's TChannel outbound writes: the tracer's TextMap as $tracing$ keys in arg2,
    // beside the application headers (here sent by a caller without tracing, as application
    // headers)
    TChannelOutbound goCaller =
        TChannelTransport.of("go-caller").singleOutbound(relayInbound.hostPort());
    goCaller.start();
    try {
      byte[] answer =
          RawClient.of(ClientConfig.of("go-caller", "relay", Outbounds.unary(goCaller)))
              .call(
                  "relay",
                  "x".getBytes(UTF_8),
                  CallOptions.builder()
                      .timeout(Duration.ofSeconds(10))
                      .header("$tracing$uber-trace-id", UBER_TRACE_ID)
                      .header("$tracing$uberctx-tenant", "t1")
                      .build())
              .join();
      assertThat(new String(answer, UTF_8)).isEqualTo("x");
    } finally {
      goCaller.stop();
    }

    assertContinuedAndPassedOn(true);
  }

  @Test
  void emittingOnlyJaegerSendsNoW3cHeaders() throws Exception {
    HttpInbound downstreamInbound = HttpTransport.create().inbound();
    downstream(downstreamInbound);
    TChannelInbound relayInbound = TChannelTransport.of("relay").inbound();
    relay(
        relayInbound,
        HttpTransport.create().singleOutbound(downstreamInbound.hostPort()),
        b -> {
          YarpcTracing.builder(otel.sdk).emit(PropagationFormat.JAEGER).build().install(b);
          return otel.startPlain(b);
        });
    TChannelOutbound goCaller =
        TChannelTransport.of("go-caller").singleOutbound(relayInbound.hostPort());
    goCaller.start();
    try {
      RawClient.of(ClientConfig.of("go-caller", "relay", Outbounds.unary(goCaller)))
          .call(
              "relay",
              "x".getBytes(UTF_8),
              CallOptions.builder()
                  .timeout(Duration.ofSeconds(10))
                  .header("$tracing$uber-trace-id", UBER_TRACE_ID)
                  .header("$tracing$uberctx-tenant", "t1")
                  .build())
          .join();
    } finally {
      goCaller.stop();
    }
    assertContinuedAndPassedOn(false);
  }

  private void assertContinuedAndPassedOn(boolean w3cToo) throws InterruptedException {
    List<SpanData> spans = otel.awaitSpans(2);
    SpanData server = span(spans, SpanKind.SERVER, "relay/relay");
    SpanData client = span(spans, SpanKind.CLIENT, "downstream/record");
    assertThat(server.getTraceId()).as("the 64-bit id, padded").isEqualTo(TRACE_128);
    assertThat(server.getParentSpanId()).isEqualTo(SPAN);
    assertThat(server.getParentSpanContext().isRemote()).isTrue();
    assertThat(server.getParentSpanContext().isSampled()).isTrue();
    assertThat(client.getTraceId()).isEqualTo(TRACE_128);
    assertThat(client.getParentSpanId()).isEqualTo(server.getSpanId());
    assertThat(relayBaggage.get()).isEqualTo("t1");

    Headers saw = downstreamSaw.get();
    assertThat(saw.get("uber-trace-id"))
        .as("Jaeger's format: trace:span:parent:flags")
        .isEqualTo(TRACE_128 + ":" + client.getSpanId() + ":0:1");
    assertThat(saw.get("uberctx-tenant")).isEqualTo("t1");
    if (w3cToo) {
      assertThat(saw.get("traceparent"))
          .isEqualTo("00-" + TRACE_128 + "-" + client.getSpanId() + "-01");
      assertThat(saw.get("baggage")).isEqualTo("tenant=t1");
    } else {
      assertThat(saw.keys()).containsExactlyInAnyOrder("uber-trace-id", "uberctx-tenant");
    }
  }
}
