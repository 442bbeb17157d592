package io.yarpc.observability.tracing;

import static io.yarpc.observability.tracing.TracingTestSupport.span;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.yarpc.Call;
import io.yarpc.CallOptions;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.transport.Body;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Response;
import io.yarpc.transport.http.HttpInbound;
import io.yarpc.transport.http.HttpTransport;
import io.yarpc.transport.tchannel.TChannelInbound;
import io.yarpc.transport.tchannel.TChannelTransport;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A handler that continues on another thread keeps the trace through {@link YarpcTracing#wrap}: the call
 * made there is a child of the handler's span and inherits the call's deadline; without the wrapper it
 * would start a trace of its own.
 */
class AsyncContinuationTest {
  private final TracingTestSupport otel = new TracingTestSupport();
  private final ExecutorService pool = Executors.newFixedThreadPool(2);
  private final AtomicLong downstreamMillisLeft = new AtomicLong();
  private RawClient toRelay;

  @BeforeEach
  void start() {
    TChannelInbound downstreamInbound = TChannelTransport.of("downstream").inbound();
    Dispatcher downstream = otel.start(Dispatcher.builder("downstream").inbound(downstreamInbound));
    downstream.register(
        Raw.procedure(
            "work",
            body -> {
              downstreamMillisLeft.set(Call.current().deadline().remainingMillis());
              return body;
            }));

    HttpInbound relayInbound = HttpTransport.create().inbound();
    Dispatcher relay =
        otel.start(
            Dispatcher.builder("relay")
                .inbound(relayInbound)
                .outbound(
                    "downstream",
                    Outbounds.unary(
                        TChannelTransport.of("relay")
                            .singleOutbound(downstreamInbound.hostPort()))));
    RawClient toDownstream = RawClient.of(relay.clientConfig("downstream"));
    relay.register(
        // continues on the pool through the wrapper: no timeout given, the call's deadline is
        // inherited
        async(
            "wrapped",
            body ->
                CompletableFuture.supplyAsync(
                    () -> toDownstream.call("work", body, CallOptions.DEFAULT).join(),
                    YarpcTracing.wrap(pool))),
        // the same on the bare pool: nothing current there, so a timeout is needed and a new trace
        // begins
        async(
            "bare",
            body ->
                CompletableFuture.supplyAsync(
                    () ->
                        toDownstream
                            .call("work", body, CallOptions.timeout(Duration.ofSeconds(5)))
                            .join(),
                    pool)));

    Dispatcher client =
        otel.start(
            Dispatcher.builder("client")
                .outbound(
                    "relay",
                    Outbounds.unary(
                        HttpTransport.create().singleOutbound(relayInbound.hostPort()))));
    toRelay = RawClient.of(client.clientConfig("relay"));
  }

  private static Procedure async(
      String name, java.util.function.Function<byte[], CompletableFuture<byte[]>> handler) {
    return Procedure.builder(name)
        .unary(
            request ->
                handler
                    .apply(request.body().toByteArray())
                    .thenApply(bytes -> Response.of(Body.of(bytes))))
        .build();
  }

  @AfterEach
  void stop() {
    otel.close();
    pool.shutdownNow();
  }

  @Test
  void theExecutorWrapperCarriesTheTraceAndTheCall() throws Exception {
    toRelay.call("wrapped", "x".getBytes(UTF_8), CallOptions.timeout(Duration.ofSeconds(8))).join();

    List<SpanData> spans = otel.awaitSpans(4);
    SpanData relayServer = span(spans, SpanKind.SERVER, "relay/wrapped");
    SpanData relayClient = span(spans, SpanKind.CLIENT, "downstream/work");
    SpanData downstreamServer = span(spans, SpanKind.SERVER, "downstream/work");
    assertThat(relayClient.getTraceId()).isEqualTo(relayServer.getTraceId());
    assertThat(relayClient.getParentSpanId()).isEqualTo(relayServer.getSpanId());
    assertThat(downstreamServer.getParentSpanId()).isEqualTo(relayClient.getSpanId());
    assertThat(downstreamMillisLeft.get())
        .as("the relay's deadline, inherited on the pool thread")
        .isPositive()
        .isLessThanOrEqualTo(8000);
  }

  @Test
  void withoutTheWrapperTheContinuationStartsANewTrace() throws Exception {
    toRelay.call("bare", "x".getBytes(UTF_8), CallOptions.timeout(Duration.ofSeconds(8))).join();

    List<SpanData> spans = otel.awaitSpans(4);
    SpanData relayServer = span(spans, SpanKind.SERVER, "relay/bare");
    SpanData relayClient = span(spans, SpanKind.CLIENT, "downstream/work");
    assertThat(relayClient.getTraceId()).isNotEqualTo(relayServer.getTraceId());
    assertThat(relayClient.getParentSpanContext().isValid()).isFalse();
  }
}
