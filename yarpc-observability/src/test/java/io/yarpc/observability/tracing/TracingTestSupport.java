package io.yarpc.observability.tracing;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import io.yarpc.Dispatcher;
import io.yarpc.transport.Body;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Response;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/** An OpenTelemetry SDK that keeps spans in memory, and small helpers for the tracing tests. */
final class TracingTestSupport implements AutoCloseable {
  final InMemorySpanExporter exporter = InMemorySpanExporter.create();
  final OpenTelemetrySdk sdk;
  private final List<Dispatcher> dispatchers = new ArrayList<>();

  TracingTestSupport() {
    this(Sampler.alwaysOn());
  }

  TracingTestSupport(Sampler sampler) {
    sdk =
        OpenTelemetrySdk.builder()
            .setTracerProvider(
                SdkTracerProvider.builder()
                    .setSampler(sampler)
                    .addSpanProcessor(SimpleSpanProcessor.create(exporter))
                    .build())
            .build();
  }

  /** A dispatcher with tracing installed, started now and stopped by {@link #close()}. */
  Dispatcher start(Dispatcher.Builder builder) {
    YarpcTracing.create(sdk).install(builder);
    return startPlain(builder);
  }

  /** A dispatcher without tracing, started now and stopped by {@link #close()}. */
  Dispatcher startPlain(Dispatcher.Builder builder) {
    Dispatcher d = builder.logLifecycle(false).build();
    d.start();
    dispatchers.add(0, d);
    return d;
  }

  /** Waits until {@code count} spans were exported (at most 10 s), then returns them. */
  List<SpanData> awaitSpans(int count) throws InterruptedException {
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (exporter.getFinishedSpanItems().size() < count && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    List<SpanData> spans = exporter.getFinishedSpanItems();
    assertThat(spans).as("exported spans").hasSize(count);
    return spans;
  }

  /** The one span of {@code kind} named {@code name}. */
  static SpanData span(List<SpanData> spans, SpanKind kind, String name) {
    List<SpanData> found =
        spans.stream().filter(s -> s.getKind() == kind && s.getName().equals(name)).toList();
    assertThat(found).as("%s span %s among %s", kind, name, spans).hasSize(1);
    return found.get(0);
  }

  /** A unary procedure of any encoding whose handler maps the request's bytes to the response's. */
  static Procedure bytes(String name, Function<byte[], byte[]> handler) {
    return Procedure.builder(name)
        .unary(
            request ->
                CompletableFuture.completedFuture(
                    Response.of(Body.of(handler.apply(request.body().toByteArray())))))
        .build();
  }

  @Override
  public void close() {
    for (Dispatcher d : dispatchers) {
      d.stop();
    }
    sdk.close();
  }
}
