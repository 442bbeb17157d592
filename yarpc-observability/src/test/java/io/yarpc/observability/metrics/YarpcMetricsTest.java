package io.yarpc.observability.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.yarpc.CallOptions;
import io.yarpc.encoding.raw.RawClient;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The builder's options and checks. */
class YarpcMetricsTest {
  private static final CallOptions OPTIONS =
      CallOptions.builder().timeout(Duration.ofSeconds(10)).routingKey("rk-1").build();

  @Test
  void noRegistryInstallsNothing() throws Exception {
    YarpcMetrics metrics = YarpcMetrics.builder(null).build();
    assertThat(metrics).hasToString("YarpcMetrics{disabled}");
    try (Loopback lo = Loopback.start("in-memory", metrics::install, metrics::install)) {
      RawClient.of(lo.client.clientConfig(Loopback.SERVER))
          .call("echo", new byte[] {1}, OPTIONS)
          .get(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void droppedTagsRead__dropped__() throws Exception {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    YarpcMetrics metrics =
        YarpcMetrics.builder(registry).dropTags("source", "routing_key", "rpc_type").build();
    try (Loopback lo = Loopback.start("in-memory", metrics::install, metrics::install)) {
      RawClient raw = RawClient.of(lo.client.clientConfig(Loopback.SERVER));
      raw.call("echo", new byte[] {1}, OPTIONS).get(10, TimeUnit.SECONDS);
    }
    Scrape s = Scrape.of(registry);
    // one instance serves both dispatchers: their meters differ by the dispatcher tag
    assertThat(s.where(x -> x.name().equals("calls_total")))
        .hasSize(2)
        .allSatisfy(
            x ->
                assertThat(x.labels())
                    .containsEntry("source", "__dropped__")
                    .containsEntry("routing_key", "__dropped__")
                    .containsEntry("rpc_type", "__dropped__")
                    .containsEntry("dest", Loopback.SERVER)
                    .containsEntry("procedure", "echo"));
    assertThat(s.value("calls_total", "dispatcher", Loopback.SERVER, "direction", "inbound"))
        .isEqualTo(1);
    assertThat(s.value("calls_total", "dispatcher", Loopback.CLIENT, "direction", "outbound"))
        .isEqualTo(1);
  }

  @Test
  void routingKeyIsATag() throws Exception {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    YarpcMetrics metrics = YarpcMetrics.builder(registry).build();
    try (Loopback lo = Loopback.start("in-memory", metrics::install, b -> b)) {
      RawClient.of(lo.client.clientConfig(Loopback.SERVER))
          .call("echo", new byte[] {1}, OPTIONS)
          .get(10, TimeUnit.SECONDS);
    }
    assertThat(
            Scrape.of(registry)
                .value("calls_total", "routing_key", "rk-1", "transport", "in-memory"))
        .isEqualTo(1);
  }

  @Test
  void builderChecks() {
    assertThatThrownBy(() -> YarpcMetrics.builder(null).maxEdges(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxEdges must be at least 1, got 0");
    assertThatThrownBy(() -> YarpcMetrics.builder(null).dropTags("caller"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown tag \"caller\"");
    assertThatThrownBy(() -> YarpcMetrics.builder(null).build().install(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("dispatcher");
  }
}
