package io.yarpc.observability.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.yarpc.CallOptions;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.ClientStream;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.StreamMessage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A known sequence of calls over each transport on loopback, with metrics on both dispatchers, each in its
 * own {@link PrometheusMeterRegistry}; the scrapes then hold exactly the expected counters, with the
 * expected tags, on the caller's side and on the server's side.
 *
 * <p>The sequence: 3 successes ({@code echo}, 5 bytes each way), 2 caller failures ({@code bad}: {@code
 * invalid-argument}), 1 server failure ({@code broken}: {@code internal}), 1 timeout ({@code slow}: {@code
 * deadline-exceeded}), 1 call to an unknown procedure ({@code nope}); over HTTP 1 oneway call, over gRPC
 * 1 stream of 2 messages each way.
 */
class MetricsOverTransportsTest {
  private static final CallOptions OPTIONS = CallOptions.timeout(Duration.ofSeconds(10));
  private static final byte[] HELLO = "hello".getBytes(StandardCharsets.UTF_8);

  @ParameterizedTest
  @ValueSource(strings = {"http", "grpc", "tchannel"})
  void countsEveryOutcomeOnBothSides(String transport) throws Exception {
    PrometheusMeterRegistry serverRegistry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    PrometheusMeterRegistry clientRegistry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    try (Loopback lo =
        Loopback.start(
            transport,
            b -> YarpcMetrics.builder(serverRegistry).build().install(b),
            b -> YarpcMetrics.builder(clientRegistry).build().install(b))) {
      RawClient raw = RawClient.of(lo.client.clientConfig(Loopback.SERVER));
      for (int i = 0; i < 3; i++) {
        assertThat(raw.call("echo", HELLO, OPTIONS).get(10, TimeUnit.SECONDS)).isEqualTo(HELLO);
      }
      for (int i = 0; i < 2; i++) {
        assertCode(raw.call("bad", HELLO, OPTIONS), Code.INVALID_ARGUMENT);
      }
      assertCode(raw.call("broken", HELLO, OPTIONS), Code.INTERNAL);
      // the server's inbound caps its deadline (Loopback.SERVER_MAX_TIMEOUT): the server times out
      assertCode(raw.call("slow", HELLO, OPTIONS), Code.DEADLINE_EXCEEDED);
      // TChannel sends routing errors as bad-request error frames, read back as invalid-argument
      Code unknown = transport.equals("tchannel") ? Code.INVALID_ARGUMENT : Code.UNIMPLEMENTED;
      assertCode(raw.call("nope", HELLO, OPTIONS), unknown);
      if (lo.oneway()) {
        raw.callOneway("oneway", HELLO, OPTIONS).get(10, TimeUnit.SECONDS);
      }
      if (lo.streaming()) {
        streamTwoMessages(lo);
      }

      // the server counts a call when its handler's future completes: the timed-out call's (and the
      // oneway call's) may complete after the client has its answer
      int serverCalls = 7 + (lo.oneway() ? 1 : 0) + (lo.streaming() ? 1 : 0);
      await(
          () -> Scrape.of(serverRegistry).value("calls_total", "procedure", "slow") == 1,
          () -> Scrape.of(serverRegistry).counters("procedure"));
      await(
          () -> sum(Scrape.of(serverRegistry), "calls_total") == serverCalls,
          () -> Scrape.of(serverRegistry).counters("procedure"));
      await(
          () -> Scrape.of(clientRegistry).value("calls_total", "procedure", "slow") == 1,
          () -> Scrape.of(clientRegistry).counters("procedure"));
      Scrape server = Scrape.of(serverRegistry);
      Scrape client = Scrape.of(clientRegistry);
      if (transport.equals("grpc")) {
        System.out.println("---- server scrape (gRPC) ----\n" + server);
      }

      Map<String, Double> expected = new TreeMap<>();
      expected.put("calls_total{procedure=echo,rpc_type=Unary}", 3.0);
      expected.put("successes_total{procedure=echo,rpc_type=Unary}", 3.0);
      expected.put("calls_total{procedure=bad,rpc_type=Unary}", 2.0);
      expected.put(
          "caller_failures_total{procedure=bad,rpc_type=Unary,error=invalid-argument,error_name=__not_set__}",
          2.0);
      expected.put("calls_total{procedure=broken,rpc_type=Unary}", 1.0);
      expected.put(
          "server_failures_total{procedure=broken,rpc_type=Unary,error=internal,error_name=__not_set__}",
          1.0);
      expected.put("calls_total{procedure=slow,rpc_type=Unary}", 1.0);
      expected.put(
          "server_failures_total{procedure=slow,rpc_type=Unary,error=deadline-exceeded,error_name=__not_set__}",
          1.0);
      if (lo.oneway()) {
        expected.put("calls_total{procedure=oneway,rpc_type=Oneway}", 1.0);
        expected.put("successes_total{procedure=oneway,rpc_type=Oneway}", 1.0);
      }
      if (lo.streaming()) {
        expected.put("calls_total{procedure=stream-echo,rpc_type=Streaming}", 1.0);
        expected.put("successes_total{procedure=stream-echo,rpc_type=Streaming}", 1.0);
        expected.put("stream_sends_total{procedure=stream-echo,rpc_type=Streaming}", 2.0);
        expected.put("stream_send_successes_total{procedure=stream-echo,rpc_type=Streaming}", 2.0);
        // two messages and the end of the stream
        expected.put("stream_receives_total{procedure=stream-echo,rpc_type=Streaming}", 3.0);
        expected.put(
            "stream_receive_successes_total{procedure=stream-echo,rpc_type=Streaming}", 3.0);
      }
      String[] keys = {"procedure", "rpc_type", "error", "error_name"};
      // the server never saw "nope": the router refused it before any middleware
      assertThat(server.counters(keys)).isEqualTo(expected);

      expected.put("calls_total{procedure=nope,rpc_type=Unary}", 1.0);
      expected.put(
          "caller_failures_total{procedure=nope,rpc_type=Unary,error="
              + unknown.wireName()
              + ",error_name=__not_set__}",
          1.0);
      assertThat(client.counters(keys)).isEqualTo(expected);

      assertEdgeTags(server, transport, "inbound");
      assertEdgeTags(client, transport, "outbound");
      for (Scrape s : new Scrape[] {server, client}) {
        assertThat(s.value("success_latency_ms_count", "procedure", "echo")).isEqualTo(3);
        assertThat(s.value("success_latency_ms_bucket", "procedure", "echo", "le", "+Inf"))
            .isEqualTo(3);
        assertThat(s.value("ttl_ms_count", "procedure", "echo")).isEqualTo(3);
        assertThat(s.value("request_payload_size_bytes_count", "procedure", "echo")).isEqualTo(3);
        assertThat(s.value("request_payload_size_bytes_sum", "procedure", "echo")).isEqualTo(15);
        assertThat(s.value("response_payload_size_bytes_sum", "procedure", "echo")).isEqualTo(15);
        assertThat(s.value("response_payload_size_bytes_bucket", "procedure", "echo", "le", "4.0"))
            .isEqualTo(0);
        assertThat(s.value("response_payload_size_bytes_bucket", "procedure", "echo", "le", "8.0"))
            .isEqualTo(3);
        assertThat(s.value("caller_failure_latency_ms_count", "procedure", "bad")).isEqualTo(2);
        assertThat(s.value("server_failure_latency_ms_count", "procedure", "broken")).isEqualTo(1);
        assertThat(s.value("timeout_ttl_ms_count", "procedure", "slow")).isEqualTo(1);
        assertThat(s.value("panics_total", "procedure", "echo")).isZero();
        // meters only failures make are not there for calls that never failed
        assertThat(s.where(x -> x.name().startsWith("caller_failure_latency_ms")))
            .allMatch(x -> !x.label("procedure").equals("echo"));
        if (lo.streaming()) {
          assertThat(s.value("streams_active", "procedure", "stream-echo")).isZero();
          assertThat(s.value("stream_duration_ms_count", "procedure", "stream-echo")).isEqualTo(1);
        }
      }
      if (lo.streaming()) {
        // payload sizes of stream messages are the server's, as in yarpc-go
        assertThat(
                server.value("stream_request_payload_size_bytes_sum", "procedure", "stream-echo"))
            .isEqualTo(10);
        assertThat(
                server.value("stream_response_payload_size_bytes_sum", "procedure", "stream-echo"))
            .isEqualTo(10);
      }
    }
  }

  /** Every sample of an edge carries yarpc-go's tags with the values this test's calls have. */
  private static void assertEdgeTags(Scrape s, String transport, String direction) {
    assertThat(s.where(x -> x.labels().containsKey("direction")))
        .isNotEmpty()
        .allSatisfy(
            x ->
                assertThat(x.labels())
                    .containsEntry("component", "yarpc")
                    .containsEntry(
                        "dispatcher",
                        direction.equals("inbound") ? Loopback.SERVER : Loopback.CLIENT)
                    .containsEntry("source", Loopback.CLIENT)
                    .containsEntry("dest", Loopback.SERVER)
                    .containsEntry("transport", transport)
                    .containsEntry("encoding", "raw")
                    .containsEntry("routing_key", "default")
                    .containsEntry("routing_delegate", "default")
                    .containsEntry("direction", direction)
                    .containsKeys("procedure", "rpc_type"));
  }

  private static void streamTwoMessages(Loopback lo) throws Exception {
    RequestMeta meta = RequestMeta.builder().procedure("stream-echo").encoding("raw").build();
    ClientStream stream =
        lo.client.clientConfig(Loopback.SERVER).callStream(meta).get(10, TimeUnit.SECONDS);
    for (int i = 0; i < 2; i++) {
      stream.send(StreamMessage.of(Body.of(HELLO))).get(10, TimeUnit.SECONDS);
    }
    stream.halfClose();
    for (int i = 0; i < 2; i++) {
      StreamMessage m = stream.receive().get(10, TimeUnit.SECONDS);
      assertThat(m.body().toByteArray()).isEqualTo(HELLO);
      m.release();
    }
    assertThat(stream.receive().get(10, TimeUnit.SECONDS)).isNull();
  }

  static void assertCode(CompletableFuture<?> call, Code code) {
    assertThatThrownBy(() -> call.get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .cause()
        .isInstanceOfSatisfying(YarpcException.class, e -> assertThat(e.code()).isEqualTo(code));
  }

  static double sum(Scrape s, String name) {
    return s.where(x -> x.name().equals(name)).stream().mapToDouble(Scrape.Sample::value).sum();
  }

  /** Waits (at most 10 s) until {@code condition} holds; fails otherwise. Asserts nothing about time. */
  static void await(BooleanSupplier condition, java.util.function.Supplier<?> state)
      throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > end) {
        throw new AssertionError("condition not met in 10 s; " + state.get());
      }
      Thread.sleep(5);
    }
  }
}
