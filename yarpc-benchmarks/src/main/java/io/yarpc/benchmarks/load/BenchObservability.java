package io.yarpc.benchmarks.load;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import io.yarpc.Dispatcher;
import io.yarpc.observability.logging.YarpcCallLogs;
import io.yarpc.observability.metrics.YarpcMetrics;
import io.yarpc.observability.tracing.YarpcTracing;
import java.util.Arrays;
import java.util.List;

/**
 * What {@code --observability} installs on YARPC's server dispatchers, as an operator would run them:
 * tracing first (an OpenTelemetry SDK that samples nothing, so spans are made and dropped), then metrics
 * into a Prometheus registry, then call logs with their defaults (successes at DEBUG, which is off).
 */
public final class BenchObservability {
  private BenchObservability() {}

  /** Installs what {@code which} names: {@code none}, {@code on} (all), or a list of the three. */
  public static void install(Dispatcher.Builder builder, String which) {
    List<String> parts = Arrays.asList(which.split(","));
    boolean all = parts.contains("on");
    if (all || parts.contains("tracing")) {
      OpenTelemetrySdk otel =
          OpenTelemetrySdk.builder()
              .setTracerProvider(
                  SdkTracerProvider.builder().setSampler(Sampler.alwaysOff()).build())
              .build();
      YarpcTracing.create(otel).install(builder);
    }
    if (all || parts.contains("metrics")) {
      YarpcMetrics.builder(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT))
          .build()
          .install(builder);
    }
    if (all || parts.contains("logs")) {
      YarpcCallLogs.builder().build().install(builder);
    }
  }
}
