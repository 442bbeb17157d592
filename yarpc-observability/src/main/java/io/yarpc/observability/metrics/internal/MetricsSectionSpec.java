package io.yarpc.observability.metrics.internal;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import io.yarpc.Dispatcher;
import io.yarpc.config.spi.ConfigContext;
import io.yarpc.config.spi.ConfigSection;
import io.yarpc.config.spi.SectionSpec;
import io.yarpc.observability.metrics.YarpcMetrics;
import java.util.List;
import java.util.function.Consumer;

/**
 * A configuration file's {@code metrics} section, as yarpc-go's: installs {@link YarpcMetrics}, recording
 * into the {@link MeterRegistry} the program provided to the loader, else Micrometer's global registry.
 * Keys: {@code tagsBlocklist} (yarpc-go's; {@link YarpcMetrics.Builder#dropTags}) and {@code maxEdges}
 * ({@link YarpcMetrics.Builder#maxEdges}). Found by yarpc-config through {@link java.util.ServiceLoader}.
 */
public final class MetricsSectionSpec implements SectionSpec {
  /** For {@link java.util.ServiceLoader}. */
  public MetricsSectionSpec() {}

  @Override
  public String key() {
    return "metrics";
  }

  @Override
  public Consumer<Dispatcher.Builder> configure(ConfigSection section, ConfigContext context) {
    MeterRegistry registry = context.provided(MeterRegistry.class);
    YarpcMetrics.Builder metrics =
        YarpcMetrics.builder(registry != null ? registry : Metrics.globalRegistry);
    List<String> blocked = section.strings("tagsBlocklist");
    if (blocked != null) {
      for (int i = 0; i < blocked.size(); i++) {
        String tag = blocked.get(i).trim();
        section.apply("tagsBlocklist[" + i + "]", () -> metrics.dropTags(tag));
      }
    }
    section.integer("maxEdges", metrics::maxEdges);
    return section.hasProblems() ? null : metrics.build()::install;
  }
}
