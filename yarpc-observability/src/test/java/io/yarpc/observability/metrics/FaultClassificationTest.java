package io.yarpc.observability.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.yarpc.CallOptions;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.errors.Code;
import io.yarpc.errors.FaultType;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * All 17 codes against yarpc-go's table ({@code yarpcerrors/yarpcerrorclassifier.go}, {@code
 * GetFaultTypeFromCode}): core's {@link Code#faultType()}, and what the metrics count for a call that
 * fails with each code — as an error, and as an application error carrying the code — on both sides.
 */
class FaultClassificationTest {
  /** yarpc-go 1.88.5's {@code GetFaultTypeFromCode}, copied by hand: null is its UnknownFault. */
  private static final Map<Code, FaultType> YARPC_GO = new EnumMap<>(Code.class);

  static {
    YARPC_GO.put(Code.OK, null);
    for (Code c :
        new Code[] {
          Code.CANCELLED,
          Code.INVALID_ARGUMENT,
          Code.NOT_FOUND,
          Code.ALREADY_EXISTS,
          Code.PERMISSION_DENIED,
          Code.FAILED_PRECONDITION,
          Code.ABORTED,
          Code.OUT_OF_RANGE,
          Code.UNAUTHENTICATED,
          Code.UNIMPLEMENTED,
          Code.RESOURCE_EXHAUSTED
        }) {
      YARPC_GO.put(c, FaultType.CLIENT);
    }
    for (Code c :
        new Code[] {
          Code.UNKNOWN, Code.DEADLINE_EXCEEDED, Code.INTERNAL, Code.UNAVAILABLE, Code.DATA_LOSS
        }) {
      YARPC_GO.put(c, FaultType.SERVER);
    }
  }

  @Test
  void coreClassifiesAsYarpcGo() {
    assertThat(YARPC_GO).hasSize(17);
    for (Code c : Code.values()) {
      assertThat(c.faultType()).as("%s", c).isEqualTo(YARPC_GO.get(c));
    }
  }

  @Test
  void metricsCountEveryCodeAsYarpcGo() throws Exception {
    PrometheusMeterRegistry serverRegistry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    PrometheusMeterRegistry clientRegistry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    Loopback lo =
        Loopback.start(
            "in-memory",
            b -> YarpcMetrics.builder(serverRegistry).build().install(b),
            b -> YarpcMetrics.builder(clientRegistry).build().install(b));
    try {
      RawClient raw = RawClient.of(lo.client.clientConfig(Loopback.SERVER));
      CallOptions options = CallOptions.timeout(Duration.ofSeconds(10));
      for (Code c : Code.values()) {
        CompletableFuture<byte[]> f = raw.call("fail", new byte[] {(byte) c.value()}, options);
        f.handle((v, e) -> null).get();
        raw.call("app-error", new byte[] {(byte) c.value()}, options).handle((v, e) -> null).get();
      }
      raw.call("app-error", new byte[] {-1}, options).handle((v, e) -> null).get();
    } finally {
      lo.close();
    }
    lo.assertNoLeaks();

    Map<String, Double> expected = new TreeMap<>();
    expected.put("calls_total{procedure=fail}", 17.0);
    expected.put("successes_total{procedure=fail}", 1.0); // ok
    expected.put("calls_total{procedure=app-error}", 18.0);
    for (Code c : Code.values()) {
      // a code without a fault type (ok) is the server's, as in yarpc-go's endStatsFromFault
      String counter =
          YARPC_GO.get(c) == FaultType.CLIENT ? "caller_failures_total" : "server_failures_total";
      if (c != Code.OK) {
        expected.put(
            counter + "{procedure=fail,error=" + c.wireName() + ",error_name=__not_set__}", 1.0);
      }
      expected.put(
          counter + "{procedure=app-error,error=" + c.wireName() + ",error_name=KeyNotFound}", 1.0);
    }
    // an application error without a code is the caller's, "application_error"
    expected.put(
        "caller_failures_total{procedure=app-error,error=application_error,error_name=KeyNotFound}",
        1.0);
    for (PrometheusMeterRegistry r :
        new PrometheusMeterRegistry[] {serverRegistry, clientRegistry}) {
      assertThat(Scrape.of(r).counters("procedure", "error", "error_name")).isEqualTo(expected);
    }
  }
}
