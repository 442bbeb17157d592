package io.yarpc.observability.metrics;

import static java.util.Objects.requireNonNull;

import io.micrometer.core.instrument.MeterRegistry;
import io.yarpc.Dispatcher;
import io.yarpc.observability.metrics.internal.MetricsGraph;
import io.yarpc.observability.observer.internal.ObservingMiddleware;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * Metrics for every call of a dispatcher, in a Micrometer {@link MeterRegistry}, with yarpc-go's metric
 * names, tags and classification, so that dashboards and alerts written for yarpc-go services read
 * yarpc-java services too.
 *
 * <pre>{@code
 * PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
 * YarpcMetrics metrics = YarpcMetrics.builder(registry).build();
 * Dispatcher dispatcher = metrics.install(Dispatcher.builder("keyvalue"))
 *     .inbound(inbound)
 *     .build();
 * }</pre>
 *
 * <p><b>What is measured.</b> {@link #install} appends a middleware to each of the dispatcher builder's six
 * chains (unary, oneway and stream; inbound and outbound). Per call it counts {@code calls} and either
 * {@code successes}, {@code caller_failures} or {@code server_failures} (tagged {@code error}, the code's
 * name such as {@code invalid-argument}, and {@code error_name}); it records the latency in {@code
 * success_latency_ms}, {@code caller_failure_latency_ms} or {@code server_failure_latency_ms}, the time
 * the caller gave ({@code ttl_ms}, and {@code timeout_ttl_ms} for timeouts) and the payload sizes ({@code
 * request_payload_size_bytes}, {@code response_payload_size_bytes}); for streams the messages sent and
 * received ({@code stream_sends}, {@code stream_receives} and their {@code _successes} and {@code
 * _failures}), {@code stream_duration_ms} and the open streams ({@code streams_active}). Every meter is
 * tagged {@code component="yarpc"}, {@code dispatcher}, {@code source}, {@code dest}, {@code transport},
 * {@code procedure}, {@code encoding}, {@code routing_key}, {@code routing_delegate}, {@code direction}
 * ({@code inbound}, {@code outbound}) and {@code rpc_type} ({@code Unary}, {@code Oneway}, {@code
 * Streaming}). Tag values are written as yarpc-go's metrics library writes them: empty as {@code default},
 * characters outside {@code [0-9A-Za-z_.-]} as {@code _}. Whether a code is the caller's or the server's
 * fault is core's {@link io.yarpc.errors.Code#faultType()}, the same table as yarpc-go's.
 *
 * <p><b>In Prometheus</b> ({@code PrometheusMeterRegistry}): counters get the {@code _total} suffix the
 * Prometheus client always writes ({@code calls_total}, where yarpc-go's Prometheus export says {@code
 * calls}); the {@code _ms} and {@code _bytes} meters are Micrometer distribution summaries rendered as
 * classic histograms in milliseconds and bytes with yarpc-go's bucket bounds ({@code
 * success_latency_ms_bucket{le="5.0"}}, {@code _count}, {@code _sum}), plus Micrometer's {@code _max}
 * gauge; {@code streams_active} is a gauge. Other registries see the plain names. Use a {@link
 * io.micrometer.core.instrument.config.MeterFilter} on the registry to rename, drop or reshape any of
 * them.
 *
 * <p><b>Bounded.</b> Each distinct tag combination is an edge whose meters are made once and cached; a
 * peer cannot make series without bound: calls to unregistered procedures and services are refused by the
 * router before any middleware (as in yarpc-go) and make none, and the values a peer or caller does
 * choose are capped by {@link Builder#maxEdges}, past which new combinations are counted with their tags
 * set to {@code __overflow__}.
 *
 * <p><b>Cost.</b> Per call: one lookup in a concurrent map keyed by the tag values, a few counter
 * increments and histogram records; no strings are built. Without {@code install} nothing runs; a builder
 * given no registry installs nothing.
 *
 * <p><b>From a configuration file.</b> With yarpc-config, a file's {@code metrics} section (yarpc-go's)
 * installs metrics on the dispatcher builder it loads: {@code tagsBlocklist: [routing_delegate]} drops
 * those tags ({@link Builder#dropTags}), {@code maxEdges} is {@link Builder#maxEdges}, and {@code
 * metrics: {}} installs them with the defaults. They record into the registry given with {@code
 * YarpcConfig.loader().provide(MeterRegistry.class, registry)}, or, when none was, into Micrometer's
 * {@link io.micrometer.core.instrument.Metrics#globalRegistry} (which records nothing until a registry
 * is added to it). Do not install metrics in code as well on that builder: {@link #install} refuses it.
 *
 * <p>Thread-safe. One instance may serve several dispatchers (their meters differ by the {@code
 * dispatcher} tag); give dispatchers that share a name and a registry the same instance.
 */
public final class YarpcMetrics {
  private final MetricsGraph graph;

  private YarpcMetrics(Builder b) {
    this.graph =
        b.registry == null
            ? null
            : new MetricsGraph(b.registry, b.maxEdges, Set.copyOf(b.droppedTags));
  }

  /**
   * A builder for metrics in {@code registry}; {@code null} gives metrics that install nothing, for
   * configuration code that has a registry only sometimes.
   */
  public static Builder builder(MeterRegistry registry) {
    return new Builder(registry);
  }

  /**
   * Adds the metrics middleware to the end of each of {@code dispatcher}'s six middleware chains, and
   * returns it; when call logs were installed on this builder before, the metrics join their middleware
   * instead (one layer watches for both, at the first install's place). The middleware sees inbound calls
   * after the inbound middleware added before it, and
   * outbound calls before the outbound middleware added after it; yarpc-go puts its own first inbound
   * and last outbound. Does nothing when the builder was given no registry.
   *
   * @throws IllegalStateException when metrics are installed on {@code dispatcher} already, by this
   *     method or by the {@code metrics} section of the configuration file it was loaded from (every
   *     call would be counted twice)
   */
  public Dispatcher.Builder install(Dispatcher.Builder dispatcher) {
    requireNonNull(dispatcher, "dispatcher");
    if (graph != null) {
      ObservingMiddleware.install(dispatcher, graph, "metrics", "metrics");
    }
    return dispatcher;
  }

  @Override
  public String toString() {
    return graph == null ? "YarpcMetrics{disabled}" : "YarpcMetrics{" + graph + "}";
  }

  /** Builds {@link YarpcMetrics}; not thread-safe. */
  public static final class Builder {
    private final MeterRegistry registry;
    private int maxEdges = 1000;
    private final Set<String> droppedTags = new LinkedHashSet<>();

    private Builder(MeterRegistry registry) {
      this.registry = registry;
    }

    /**
     * The most edges (distinct tag combinations) kept per direction, inbound and outbound each; default
     * 1,000. Beyond it, calls of a combination not seen before are counted on an overflow edge of their
     * direction, rpc type and transport, whose other tags read {@code __overflow__}; the first such call
     * is logged at WARN (logger {@code io.yarpc.observability.metrics.internal.MetricsGraph}).
     *
     * @throws IllegalArgumentException when {@code maxEdges} is less than 1
     */
    public Builder maxEdges(int maxEdges) {
      if (maxEdges < 1) {
        throw new IllegalArgumentException("maxEdges must be at least 1, got " + maxEdges);
      }
      this.maxEdges = maxEdges;
      return this;
    }

    /**
     * Tags whose values are replaced by {@code __dropped__} on every meter, as yarpc-go's {@code
     * Metrics.TagsBlocklist}: fewer series, one fewer dimension. Names: {@code source}, {@code dest},
     * {@code transport}, {@code procedure}, {@code encoding}, {@code routing_key}, {@code
     * routing_delegate}, {@code direction}, {@code rpc_type}. Default: none.
     *
     * @throws IllegalArgumentException for any other name
     */
    public Builder dropTags(String... tags) {
      for (String tag : tags) {
        if (!MetricsGraph.TAG_NAMES.contains(requireNonNull(tag, "tag"))) {
          throw new IllegalArgumentException(
              "unknown tag \"" + tag + "\"; the tags are " + MetricsGraph.TAG_NAMES);
        }
        droppedTags.add(tag);
      }
      return this;
    }

    /** The metrics. */
    public YarpcMetrics build() {
      return new YarpcMetrics(this);
    }
  }
}
