package io.yarpc.observability.logging;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.yarpc.Dispatcher;
import io.yarpc.observability.metrics.YarpcMetrics;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Handler;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.slf4j.event.Level;

/**
 * Metrics and call logs installed on one dispatcher builder share one observing layer: both see every
 * call, and the call logs add no middleware of their own (measured as heap per call, which is steady;
 * nothing here measures time).
 */
class SharedObserverLayerTest {
  private static final int CALLS = 100_000;

  @Test
  void bothObserversSeeTheCall() {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    CapturingLogger logger = new CapturingLogger("calls", Level.DEBUG);
    Dispatcher d =
        started(
            b -> {
              YarpcMetrics.builder(registry).build().install(b);
              YarpcCallLogs.builder().logger(logger).build().install(b);
            });
    try {
      call(d);
      assertThat(registry.scrape())
          .contains("calls_total{")
          .containsPattern("calls_total\\{[^}]*direction=\"inbound\"[^}]*\\} 1\\.0");
      assertThat(logger.linesFor("echo"))
          .singleElement()
          .satisfies(l -> assertThat(l.message()).isEqualTo("Handled inbound request."));
    } finally {
      d.stop();
    }
  }

  @Test
  void callLogsJoinTheMetricsLayerInsteadOfAddingOne() {
    double metricsOnly = bytesPerCall(b -> YarpcMetrics.builder(registry()).build().install(b));
    double both =
        bytesPerCall(
            b -> {
              YarpcMetrics.builder(registry()).build().install(b);
              YarpcCallLogs.builder().build().install(b); // successes at DEBUG: off in the tests
            });
    double logsOnly = bytesPerCall(b -> YarpcCallLogs.builder().build().install(b));
    double none = bytesPerCall(b -> {});
    // a layer of its own costs the call logs what they cost alone; joined, next to nothing
    assertThat(logsOnly - none).as("call logs in a layer of their own").isGreaterThan(150);
    assertThat(both - metricsOnly).as("call logs joining the metrics' layer").isLessThan(64);
  }

  private static PrometheusMeterRegistry registry() {
    return new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  }

  private static Dispatcher started(Consumer<Dispatcher.Builder> install) {
    Dispatcher.Builder b = Dispatcher.builder("svc").handlerExecutor(Runnable::run);
    install.accept(b);
    Dispatcher d = b.build();
    d.register(
        Procedure.builder("echo")
            .unary(r -> CompletableFuture.completedFuture(Response.of(r.body())))
            .build());
    d.start();
    return d;
  }

  private static void call(Dispatcher d) {
    RequestMeta meta =
        RequestMeta.builder()
            .caller("caller")
            .service("svc")
            .procedure("echo")
            .encoding("raw")
            .transport("grpc")
            .deadline(Deadline.after(Duration.ofHours(1)))
            .build();
    Handler<Request, Response> h = d.router().choose(meta).unary();
    h.handle(Request.of(meta, Body.of(new byte[16]))).join().body().release();
  }

  private static double bytesPerCall(Consumer<Dispatcher.Builder> install) {
    Dispatcher d = started(install);
    try {
      com.sun.management.ThreadMXBean threads =
          (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
      long thread = Thread.currentThread().getId();
      for (int i = 0; i < CALLS; i++) {
        call(d); // warm-up: compiled code allocates what it will
      }
      long before = threads.getThreadAllocatedBytes(thread);
      for (int i = 0; i < CALLS; i++) {
        call(d);
      }
      return (threads.getThreadAllocatedBytes(thread) - before) / (double) CALLS;
    } finally {
      d.stop();
    }
  }
}
