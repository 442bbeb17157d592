package io.yarpc.observability.metrics;

import static io.yarpc.observability.metrics.MetricsOverTransportsTest.assertCode;
import static io.yarpc.observability.metrics.MetricsOverTransportsTest.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.yarpc.CallOptions;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.errors.Code;
import io.yarpc.transport.Body;
import io.yarpc.transport.ClientStream;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.StreamMessage;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * How the metrics count the ways a call can end that the transport test does not reach, over yarpc-testing's
 * in-memory transport, which checks that every body was released exactly once ({@link
 * Loopback#assertNoLeaks()} after each test).
 */
class ObservedOutcomesTest {
  private final PrometheusMeterRegistry serverRegistry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final PrometheusMeterRegistry clientRegistry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private Loopback lo;
  private RawClient raw;

  @BeforeEach
  void start() {
    lo =
        Loopback.start(
            "in-memory",
            b -> YarpcMetrics.builder(serverRegistry).build().install(b),
            b -> YarpcMetrics.builder(clientRegistry).build().install(b));
    raw = RawClient.of(lo.client.clientConfig(Loopback.SERVER));
  }

  @AfterEach
  void stop() {
    lo.close();
    lo.assertNoLeaks();
  }

  private Scrape server() {
    return Scrape.of(serverRegistry);
  }

  private Scrape client() {
    return Scrape.of(clientRegistry);
  }

  /** The caller's own deadline passes first: the caller counts a deadline-exceeded server failure. */
  @Test
  void clientTimeout() throws Exception {
    assertCode(
        raw.call("slow", new byte[] {1}, CallOptions.timeout(Duration.ofMillis(100))),
        Code.DEADLINE_EXCEEDED);
    await(
        () -> client().value("calls_total", "procedure", "slow") == 1,
        () -> client().counters("procedure"));
    Scrape c = client();
    assertThat(c.value("server_failures_total", "procedure", "slow", "error", "deadline-exceeded"))
        .isEqualTo(1);
    assertThat(c.value("server_failure_latency_ms_count", "procedure", "slow")).isEqualTo(1);
    assertThat(c.value("timeout_ttl_ms_count", "procedure", "slow")).isEqualTo(1);
    // the time the call had left when it reached the middleware: at most the 100 ms it was given
    assertThat(c.value("timeout_ttl_ms_sum", "procedure", "slow"))
        .isGreaterThan(0)
        .isLessThanOrEqualTo(100);
  }

  /** A caller that gives up cancels: both sides count a cancelled caller failure. */
  @Test
  void callerCancels() throws Exception {
    int before = Loopback.SLOW_CALLS.get();
    CompletableFuture<byte[]> f =
        raw.call("slow", new byte[] {1}, CallOptions.timeout(Duration.ofSeconds(10)));
    // cancelled before its handler runs, a call never reaches the server's middleware
    await(() -> Loopback.SLOW_CALLS.get() > before, () -> "the handler did not run");
    f.cancel(true);
    await(
        () -> server().value("calls_total", "procedure", "slow") == 1,
        () ->
            "server "
                + server().counters("procedure")
                + ", client "
                + client().counters("procedure")
                + ", in flight "
                + lo.server.inFlightCalls());
    await(
        () -> client().value("calls_total", "procedure", "slow") == 1,
        () -> client().counters("procedure"));
    for (Scrape s : new Scrape[] {server(), client()}) {
      assertThat(s.counters("procedure", "error"))
          .containsOnlyKeys(
              "calls_total{procedure=slow}",
              "caller_failures_total{procedure=slow,error=cancelled}");
    }
  }

  /**
   * A handler that throws instead of returning a future: the server counts a panic and yarpc-go's {@code
   * unknown_internal_yarpc}; the caller reads {@code unknown}.
   */
  @Test
  void handlerThrows() throws Exception {
    assertCode(raw.call("panic", new byte[] {1}, options()), Code.UNKNOWN);
    assertThat(server().counters("procedure", "error"))
        .containsOnly(
            entry("calls_total{procedure=panic}"),
            entry("panics_total{procedure=panic}"),
            entry("server_failures_total{procedure=panic,error=unknown_internal_yarpc}"));
    assertThat(client().counters("procedure", "error"))
        .containsOnly(
            entry("calls_total{procedure=panic}"),
            entry("server_failures_total{procedure=panic,error=unknown}"));
  }

  @Test
  void onewayCall() throws Exception {
    raw.callOneway("oneway", new byte[] {1, 2, 3}, options()).get(10, TimeUnit.SECONDS);
    await(
        () -> server().value("calls_total", "rpc_type", "Oneway") == 1,
        () -> server().counters("procedure"));
    for (Scrape s : new Scrape[] {server(), client()}) {
      assertThat(s.counters("procedure", "rpc_type"))
          .containsOnly(
              entry("calls_total{procedure=oneway,rpc_type=Oneway}"),
              entry("successes_total{procedure=oneway,rpc_type=Oneway}"));
      assertThat(s.value("request_payload_size_bytes_sum", "procedure", "oneway")).isEqualTo(3);
      assertThat(s.where(x -> x.name().startsWith("response_payload_size_bytes"))).isEmpty();
    }
  }

  /**
   * A client that cancels its stream: both sides count the stream (opened: a success, as in yarpc-go)
   * and its cancelled end, and no stream stays active.
   */
  @Test
  void streamCancelledByClient() throws Exception {
    ClientStream stream =
        lo.client
            .clientConfig(Loopback.SERVER)
            .callStream(streamMeta("stream-echo"))
            .get(10, TimeUnit.SECONDS);
    stream.send(StreamMessage.of(Body.of(new byte[] {1, 2}))).get(10, TimeUnit.SECONDS);
    StreamMessage echoed = stream.receive().get(10, TimeUnit.SECONDS);
    echoed.release();
    assertThat(client().value("streams_active", "procedure", "stream-echo")).isEqualTo(1);
    await(
        () -> server().value("streams_active", "procedure", "stream-echo") == 1,
        () -> server().text);
    stream.cancel();
    await(
        () -> server().value("streams_active", "procedure", "stream-echo") == 0,
        () -> server().text);
    Scrape server = server();
    Scrape client = client();
    for (Scrape s : new Scrape[] {server, client}) {
      assertThat(s.value("streams_active", "procedure", "stream-echo")).isZero();
      assertThat(s.value("stream_duration_ms_count", "procedure", "stream-echo")).isEqualTo(1);
    }
    assertThat(client.counters("procedure", "error"))
        .containsOnly(
            entry("calls_total{procedure=stream-echo}"),
            entry("successes_total{procedure=stream-echo}"),
            entry("caller_failures_total{procedure=stream-echo,error=cancelled}"),
            entry("stream_sends_total{procedure=stream-echo}"),
            entry("stream_send_successes_total{procedure=stream-echo}"),
            entry("stream_receives_total{procedure=stream-echo}"),
            entry("stream_receive_successes_total{procedure=stream-echo}"));
    // the server's handler was waiting for the next message when the client cancelled
    assertThat(server.counters("procedure", "error"))
        .containsOnly(
            entry("calls_total{procedure=stream-echo}"),
            entry("successes_total{procedure=stream-echo}"),
            entry("caller_failures_total{procedure=stream-echo,error=cancelled}"),
            entry("stream_sends_total{procedure=stream-echo}"),
            entry("stream_send_successes_total{procedure=stream-echo}"),
            entry("stream_receives_total{procedure=stream-echo}", 2.0),
            entry("stream_receive_successes_total{procedure=stream-echo}"),
            entry("stream_receive_failures_total{procedure=stream-echo,error=cancelled}"));
  }

  /**
   * A stream to an unknown procedure: the server never sees it; the client counts one call and its
   * failure ({@code unimplemented}), at open or at the first receive.
   */
  @Test
  void streamToUnknownProcedure() throws Exception {
    CompletableFuture<ClientStream> opening =
        lo.client.clientConfig(Loopback.SERVER).callStream(streamMeta("nope"));
    try {
      ClientStream stream = opening.get(10, TimeUnit.SECONDS);
      stream.halfClose();
      assertCode(stream.receive(), Code.UNIMPLEMENTED);
    } catch (java.util.concurrent.ExecutionException e) {
      assertCode(opening, Code.UNIMPLEMENTED);
    }
    assertThat(server().samples).isEmpty();
    assertThat(client().counters("procedure", "error"))
        .containsEntry("calls_total{procedure=nope}", 1.0)
        .containsEntry("caller_failures_total{procedure=nope,error=unimplemented}", 1.0);
    assertThat(client().value("streams_active", "procedure", "nope")).isZero();
  }

  private static RequestMeta streamMeta(String procedure) {
    return RequestMeta.builder().procedure(procedure).encoding("raw").build();
  }

  private static CallOptions options() {
    return CallOptions.timeout(Duration.ofSeconds(10));
  }

  private static java.util.Map.Entry<String, Double> entry(String key) {
    return entry(key, 1.0);
  }

  private static java.util.Map.Entry<String, Double> entry(String key, double value) {
    return java.util.Map.entry(key, value);
  }
}
