package io.yarpc.observability.tracing;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import io.yarpc.CallOptions;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.transport.Headers;
import io.yarpc.transport.grpc.GrpcInbound;
import io.yarpc.transport.grpc.GrpcTransport;
import io.yarpc.transport.http.HttpInbound;
import io.yarpc.transport.http.HttpTransport;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Calls the sampler drops export nothing, yet their context still travels: the next hop gets the same
 * trace id with the sampled flag off, so it keeps the decision.
 */
class SampledOutTest {
  private static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";

  private TracingTestSupport otel;
  private final AtomicReference<Headers> downstreamSaw = new AtomicReference<>();
  private final AtomicBoolean relayRecording = new AtomicBoolean(true);

  @AfterEach
  void stop() {
    otel.close();
  }

  /** relay (traced, HTTP inbound) calls downstream (not traced, gRPC inbound) that records. */
  private HttpInbound start(Sampler sampler) {
    otel = new TracingTestSupport(sampler);
    GrpcInbound downstreamInbound =
        GrpcTransport.create().inbound(new InetSocketAddress("127.0.0.1", 0));
    Dispatcher downstream =
        otel.startPlain(Dispatcher.builder("downstream").inbound(downstreamInbound));
    downstream.register(
        Raw.procedure(
            "record",
            body -> {
              downstreamSaw.set(io.yarpc.Call.current().meta().propagationHeaders());
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
                        GrpcTransport.create()
                            .singleOutbound("127.0.0.1:" + downstreamInbound.port()))));
    RawClient client = RawClient.of(relay.clientConfig("downstream"));
    relay.register(
        Raw.procedure(
            "relay",
            body -> {
              relayRecording.set(Span.current().isRecording());
              return client.call("record", body, CallOptions.DEFAULT).join();
            }));
    return relayInbound;
  }

  private static int sampledBit(String traceparent) {
    return Integer.parseInt(traceparent.substring(traceparent.length() - 2), 16) & 0x01;
  }

  private static HttpResponse<String> post(HttpInbound inbound, String traceparent)
      throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://" + inbound.hostPort() + "/"))
            .header("Rpc-Caller", "caller")
            .header("Rpc-Service", "relay")
            .header("Rpc-Procedure", "relay")
            .header("Rpc-Encoding", "raw")
            .header("Context-TTL-MS", "10000")
            .POST(HttpRequest.BodyPublishers.ofString("x"));
    if (traceparent != null) {
      b.header("traceparent", traceparent);
    }
    return HttpClient.newHttpClient().send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void anUnsampledParentIsRespectedAndItsDecisionPassedOn() throws Exception {
    HttpInbound inbound = start(Sampler.parentBased(Sampler.alwaysOn()));
    HttpResponse<String> response = post(inbound, "00-" + TRACE + "-00f067aa0ba902b7-00");
    assertThat(response.statusCode()).isEqualTo(200);

    assertThat(relayRecording).isFalse();
    Headers saw = downstreamSaw.get();
    assertThat(saw.get("traceparent")).startsWith("00-" + TRACE + "-");
    assertThat(sampledBit(saw.get("traceparent"))).isZero();
    assertThat(saw.get("uber-trace-id")).startsWith(TRACE + ":").endsWith(":0");
    Thread.sleep(200);
    assertThat(otel.exporter.getFinishedSpanItems()).as("nothing exported").isEmpty();

    // the same service samples a call whose caller did
    post(inbound, "00-" + TRACE + "-00f067aa0ba902b7-01");
    assertThat(otel.awaitSpans(2)).allSatisfy(s -> assertThat(s.getTraceId()).isEqualTo(TRACE));
    assertThat(downstreamSaw.get().get("traceparent")).endsWith("-01");
  }

  @Test
  void aRootTheSamplerDropsStillPropagatesItsDecision() throws Exception {
    HttpInbound inbound = start(Sampler.alwaysOff());
    Dispatcher client =
        otel.start(
            Dispatcher.builder("client")
                .outbound(
                    "relay",
                    Outbounds.unary(HttpTransport.create().singleOutbound(inbound.hostPort()))));
    byte[] answer =
        RawClient.of(client.clientConfig("relay"))
            .call("relay", "x".getBytes(UTF_8), CallOptions.timeout(Duration.ofSeconds(10)))
            .join();
    assertThat(new String(answer, UTF_8)).isEqualTo("x");

    String traceparent = downstreamSaw.get().get("traceparent");
    assertThat(traceparent).matches("00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}");
    // the sampled bit is off (the SDK may set W3C level 2's "random trace id" bit, 0x02)
    assertThat(sampledBit(traceparent)).isZero();
    assertThat(downstreamSaw.get().get("uber-trace-id")).endsWith(":0");
    assertThat(traceparent).doesNotContain("00000000000000000000000000000000");
    Thread.sleep(200);
    assertThat(otel.exporter.getFinishedSpanItems()).isEmpty();
  }
}
