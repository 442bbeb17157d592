package io.yarpc.observability.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.yarpc.observability.logging.internal.CallLogObserver;
import io.yarpc.observability.metrics.internal.MetricsGraph;
import io.yarpc.observability.observer.internal.CallObserver;
import io.yarpc.observability.observer.internal.ObservingMiddleware;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Handler;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * What the middleware costs a call, measured on the calling thread with the handler answering at once:
 * heap allocated per call (asserted with a generous bound, to catch a regression such as building
 * strings per call) and time per call (printed only: tests assert nothing about time). The meters are
 * made on the first call of an edge and found again for every later one.
 */
class PerCallCostTest {
  private static final int CALLS = 200_000;

  private static final RequestMeta META =
      RequestMeta.builder()
          .caller("caller")
          .service("service")
          .procedure("pkg.Service::Method")
          .encoding("proto")
          .transport("grpc")
          .deadline(Deadline.after(Duration.ofHours(1)))
          .build();
  private static final Request REQUEST = Request.of(META, Body.of(new byte[350]));
  private static final CompletableFuture<Response> RESPONSE =
      CompletableFuture.completedFuture(Response.of(Body.of(new byte[350])));
  private static final Handler<Request, Response> HANDLER = request -> RESPONSE;

  @Test
  void metricsPerCall() {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    MetricsGraph graph = new MetricsGraph(registry, 1000, Set.of());
    Cost cost = measure(graph);
    System.out.printf(
        "metrics middleware: %.0f B and %.0f ns per call over the handler alone%n",
        cost.bytes, cost.nanos);
    assertThat(graph.edgeCount()).isEqualTo(2); // inbound and outbound, made once
    assertThat(Scrape.of(registry).value("calls_total", "direction", "inbound"))
        .isEqualTo(2.0 * CALLS);
    assertThat(cost.bytes).isLessThan(512);
  }

  @Test
  void disabledCallLogsPerCall() {
    // successes at DEBUG, which slf4j-simple (the test binding) has off
    CallLogObserver logs =
        new CallLogObserver(
            LoggerFactory.getLogger("io.yarpc.calls"),
            new Level[][] {
              {Level.DEBUG, Level.WARN, Level.ERROR}, {Level.DEBUG, Level.ERROR, Level.ERROR}
            });
    Cost cost = measure(logs);
    System.out.printf(
        "call-log middleware, level off: %.0f B and %.0f ns per call over the handler alone%n",
        cost.bytes, cost.nanos);
    assertThat(cost.bytes).isLessThan(400);
  }

  private record Cost(double bytes, double nanos) {}

  /** Allocation and time per call of inbound and outbound unary middleware, less the handler's. */
  private static Cost measure(CallObserver observer) {
    ObservingMiddleware m = new ObservingMiddleware("service", observer);
    Handler<Request, Response> inbound = request -> m.unaryInbound(request, HANDLER);
    Handler<Request, Response> outbound = request -> m.unaryOutbound(request, HANDLER);
    Cost base = run(HANDLER, HANDLER); // warms up too
    run(inbound, outbound);
    Cost with = run(inbound, outbound);
    return new Cost(
        (with.bytes - base.bytes) / 2, (with.nanos - base.nanos) / 2); // per observed call
  }

  private static Cost run(Handler<Request, Response> a, Handler<Request, Response> b) {
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long thread = Thread.currentThread().getId();
    long bytes = threads.getThreadAllocatedBytes(thread);
    long start = System.nanoTime();
    for (int i = 0; i < CALLS; i++) {
      a.handle(REQUEST).join();
      b.handle(REQUEST).join();
    }
    long nanos = System.nanoTime() - start;
    return new Cost(
        (threads.getThreadAllocatedBytes(thread) - bytes) / (double) CALLS, nanos / (double) CALLS);
  }
}
