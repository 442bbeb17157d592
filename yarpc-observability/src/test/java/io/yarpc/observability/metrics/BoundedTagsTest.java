package io.yarpc.observability.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.yarpc.CallOptions;
import io.yarpc.ClientConfig;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import java.time.Duration;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * A peer that sends names it makes up cannot make series without bound: calls to unknown procedures make
 * none on the server (the router refuses them before any middleware), and tag values a peer or caller
 * chooses (procedure names on the caller's side, caller names on the server's side) stop making edges at
 * {@code maxEdges}; later ones are counted on the overflow edge.
 */
class BoundedTagsTest {
  private static final CallOptions OPTIONS = CallOptions.timeout(Duration.ofSeconds(10));
  private static final int MAX_EDGES = 10;

  @Test
  void randomProcedureNames() throws Exception {
    PrometheusMeterRegistry serverRegistry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    PrometheusMeterRegistry clientRegistry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    try (Loopback lo =
        Loopback.start(
            "http",
            b -> YarpcMetrics.builder(serverRegistry).build().install(b),
            b -> YarpcMetrics.builder(clientRegistry).maxEdges(MAX_EDGES).build().install(b))) {
      RawClient raw = RawClient.of(lo.client.clientConfig(Loopback.SERVER));
      raw.call("echo", new byte[] {1}, OPTIONS).get(10, TimeUnit.SECONDS);
      int serverSeries = Scrape.of(serverRegistry).samples.size();

      callRandomProcedures(raw, 1000);
      Scrape server = Scrape.of(serverRegistry);
      assertThat(server.samples).hasSize(serverSeries);
      assertThat(server.value("calls_total", "procedure", "echo")).isEqualTo(1);

      // the caller: "echo" and the first 9 names got edges, the other 991 calls the overflow edge
      Scrape client = Scrape.of(clientRegistry);
      assertThat(procedures(client)).hasSize(MAX_EDGES + 1).contains("echo", "__overflow__");
      assertThat(client.value("calls_total", "procedure", "__overflow__")).isEqualTo(991);
      assertThat(
              client.value(
                  "caller_failures_total", "procedure", "__overflow__", "error", "unimplemented"))
          .isEqualTo(991);
      assertThat(
              client.where(
                  s ->
                      s.name().equals("calls_total")
                          && "__overflow__".equals(s.label("procedure"))))
          .singleElement()
          .satisfies(
              s ->
                  assertThat(s.labels())
                      .containsEntry("source", "__overflow__")
                      .containsEntry("dest", "__overflow__")
                      .containsEntry("encoding", "__overflow__")
                      .containsEntry("routing_key", "__overflow__")
                      .containsEntry("routing_delegate", "__overflow__")
                      .containsEntry("transport", "http")
                      .containsEntry("direction", "outbound")
                      .containsEntry("rpc_type", "Unary"));
      int clientSeries = client.samples.size();

      callRandomProcedures(raw, 1000);
      assertThat(Scrape.of(clientRegistry).samples).hasSize(clientSeries);
      assertThat(Scrape.of(serverRegistry).samples).hasSize(serverSeries);
    }
  }

  @Test
  void randomCallerNames() throws Exception {
    PrometheusMeterRegistry serverRegistry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    PrometheusMeterRegistry clientRegistry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    try (Loopback lo =
        Loopback.start(
            "http",
            b -> YarpcMetrics.builder(serverRegistry).maxEdges(MAX_EDGES).build().install(b),
            b -> YarpcMetrics.builder(clientRegistry).maxEdges(MAX_EDGES).build().install(b))) {
      ClientConfig cc = lo.client.clientConfig(Loopback.SERVER);
      callAsRandomCallers(cc, 1000);
      Scrape server = Scrape.of(serverRegistry);
      Set<String> sources =
          server.where(s -> s.name().equals("calls_total")).stream()
              .map(s -> s.label("source"))
              .collect(Collectors.toSet());
      assertThat(sources).hasSize(MAX_EDGES + 1).contains("__overflow__");
      assertThat(server.value("calls_total", "source", "__overflow__")).isEqualTo(1000 - MAX_EDGES);
      assertThat(server.value("successes_total", "source", "__overflow__"))
          .isEqualTo(1000 - MAX_EDGES);
      int serverSeries = server.samples.size();
      int clientSeries = Scrape.of(clientRegistry).samples.size();

      callAsRandomCallers(cc, 1000);
      assertThat(Scrape.of(serverRegistry).samples).hasSize(serverSeries);
      assertThat(Scrape.of(clientRegistry).samples).hasSize(clientSeries);
      assertThat(Scrape.of(serverRegistry).value("calls_total", "source", "__overflow__"))
          .isEqualTo(2000 - MAX_EDGES);
    }
  }

  private static Set<String> procedures(Scrape s) {
    return s.where(x -> x.name().equals("calls_total")).stream()
        .map(x -> x.label("procedure"))
        .collect(Collectors.toSet());
  }

  private static void callRandomProcedures(RawClient raw, int n) throws Exception {
    for (int i = 0; i < n; i++) {
      MetricsOverTransportsTest.assertCode(
          raw.call("p-" + UUID.randomUUID(), new byte[] {1}, OPTIONS),
          io.yarpc.errors.Code.UNIMPLEMENTED);
    }
  }

  private static void callAsRandomCallers(ClientConfig cc, int n) throws Exception {
    for (int i = 0; i < n; i++) {
      RequestMeta meta =
          RequestMeta.builder()
              .caller("c-" + UUID.randomUUID())
              .procedure("echo")
              .encoding("raw")
              .deadline(Deadline.after(Duration.ofSeconds(10)))
              .build();
      cc.call(Request.of(meta, Body.of(new byte[] {1})))
          .thenAccept(r -> r.body().release())
          .get(10, TimeUnit.SECONDS);
    }
  }
}
