package io.yarpc.observability.metrics.internal;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.yarpc.observability.observer.internal.Outcome;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The meters of one edge of the service graph: one tag tuple (source, dest, transport, procedure,
 * encoding, routing key, routing delegate, direction, rpc type, and the dispatcher), as yarpc-go's {@code
 * edge}. Meters every call of the edge records are made with the edge; those only failures record (the
 * failure counters per error, the failure latencies, {@code timeout_ttl_ms}) on first use, so an edge
 * that never fails exports none of them. Thread-safe.
 */
final class Edge {
  /** yarpc-go's {@code bucket.NewRPCLatency()}: 1 ms to 10 s, in milliseconds. */
  static final double[] LATENCY_BUCKETS_MS = {
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16, 18, 20, 25, 30, 35, 40, 45, 50, 60, 70, 80, 90, 100,
    120, 140, 160, 180, 200, 250, 300, 350, 400, 450, 500, 600, 700, 800, 900, 1000, 1500, 2000,
    2500, 3000, 4000, 5000, 7500, 10000
  };

  /**
   * yarpc-go's payload buckets 1 B, 2 B, 4 B ... 256 MiB ({@code bucket.NewExponential(1, 2, 29)}); its
   * extra bucket 0 is left out, as Micrometer takes only positive bounds (an empty body counts in
   * {@code le="1.0"}).
   */
  static final double[] BYTES_BUCKETS = bytesBuckets();

  /**
   * Time windows of a summary's {@code _max} and of Micrometer's own windowed histogram: one, not
   * Micrometer's default three, since every record updates each window (a third of the cost; the {@code
   * _max} then restarts once per expiry instead of sliding). The exported buckets are cumulative either
   * way.
   */
  static final int WINDOWS = 1;

  /** The {@code error_name} of a failure without an application error name (yarpc-go's). */
  static final String NOT_SET = "__not_set__";

  /** Distinct (error, error_name) series per edge and fault before names fold into the overflow. */
  static final int MAX_FAILURE_SERIES = 64;

  private record FailureKey(String error, String errorName) {}

  private final MeterRegistry registry;
  private final Tags tags;

  final Counter calls;
  final Counter successes;
  final Counter panics;

  // unary and oneway
  final DistributionSummary successLatency;
  final DistributionSummary ttl;
  final DistributionSummary requestSize;
  final DistributionSummary responseSize; // unary only
  private volatile DistributionSummary callerFailureLatency;
  private volatile DistributionSummary serverFailureLatency;
  private volatile DistributionSummary timeoutTtl;

  private final Map<FailureKey, Counter> callerFailures = new ConcurrentHashMap<>();
  private final Map<FailureKey, Counter> serverFailures = new ConcurrentHashMap<>();

  // streams
  final Counter sends;
  final Counter sendSuccesses;
  final Counter receives;
  final Counter receiveSuccesses;
  private final Map<String, Counter> sendFailures = new ConcurrentHashMap<>();
  private final Map<String, Counter> receiveFailures = new ConcurrentHashMap<>();
  final DistributionSummary streamDuration;
  final DistributionSummary streamRequestSize; // inbound only
  final DistributionSummary streamResponseSize; // inbound only
  final AtomicLong streamsActive;

  /**
   * The meters of the edge tagged {@code tags} (already scrubbed); {@code activeStreams} is the shared
   * gauge state for its {@code streams_active} (null for unary and oneway edges).
   */
  Edge(
      MeterRegistry registry,
      Tags tags,
      boolean unary,
      boolean streaming,
      boolean inbound,
      AtomicLong activeStreams) {
    this.registry = registry;
    this.tags = tags;
    calls = counter("calls", "Total number of RPCs.");
    successes = counter("successes", "Number of successful RPCs.");
    panics = counter("panics", "Number of RPCs failed because of panic.");
    if (!streaming) {
      successLatency = latency("success_latency_ms", "Latency distribution of successful RPCs.");
      ttl = latency("ttl_ms", "TTL distribution of the RPCs passed by the caller");
      requestSize =
          bytes(
              "request_payload_size_bytes",
              "Request payload size distribution of the RPCs in bytes");
      responseSize =
          unary
              ? bytes(
                  "response_payload_size_bytes",
                  "Response payload size distribution of the RPCs in bytes")
              : null;
      sends = sendSuccesses = receives = receiveSuccesses = null;
      streamDuration = streamRequestSize = streamResponseSize = null;
      streamsActive = null;
    } else {
      successLatency = ttl = requestSize = responseSize = null;
      sends = counter("stream_sends", "Total number of streaming messages sent.");
      sendSuccesses =
          counter("stream_send_successes", "Number of successful streaming messages sent.");
      receives = counter("stream_receives", "Total number of streaming messages recevied.");
      receiveSuccesses =
          counter("stream_receive_successes", "Number of successful streaming messages received.");
      streamDuration =
          latency("stream_duration_ms", "Latency distribution of total stream duration.");
      streamRequestSize =
          inbound
              ? bytes(
                  "stream_request_payload_size_bytes", "Stream request payload size distribution")
              : null;
      streamResponseSize =
          inbound
              ? bytes(
                  "stream_response_payload_size_bytes", "Stream response payload size distribution")
              : null;
      streamsActive = activeStreams;
      Gauge.builder("streams_active", activeStreams, AtomicLong::get)
          .description("Number of active streams.")
          .tags(tags)
          .strongReference(true)
          .register(registry);
    }
  }

  private static double[] bytesBuckets() {
    double[] b = new double[29];
    for (int i = 0; i < b.length; i++) {
      b[i] = 1L << i;
    }
    return b;
  }

  /**
   * Counts a failure of {@code outcome} in {@code caller_failures} or {@code server_failures}, with its
   * application error's name as {@code error_name} when {@code named} (unary and oneway calls; streams
   * always say {@value #NOT_SET}, as in yarpc-go).
   */
  void countFailure(Outcome outcome, boolean named) {
    boolean caller = outcome.isCallerFailure();
    Map<FailureKey, Counter> counters = caller ? callerFailures : serverFailures;
    String name = !named || outcome.errorName() == null ? NOT_SET : outcome.errorName();
    FailureKey key = new FailureKey(outcome.errorTag(), name);
    Counter c = counters.get(key);
    if (c == null) {
      if (counters.size() >= MAX_FAILURE_SERIES) {
        key = new FailureKey(outcome.errorTag(), MetricsGraph.OVERFLOW);
      }
      c =
          counters.computeIfAbsent(
              key,
              k ->
                  Counter.builder(caller ? "caller_failures" : "server_failures")
                      .description(
                          caller
                              ? "Number of RPCs failed because of caller error."
                              : "Number of RPCs failed because of server error.")
                      .tags(tags)
                      .tag("error", TagValues.scrub(k.error()))
                      .tag("error_name", TagValues.scrub(k.errorName()))
                      .register(registry));
    }
    c.increment();
  }

  /** {@code caller_failure_latency_ms} or {@code server_failure_latency_ms}, made on first use. */
  DistributionSummary failureLatency(boolean caller) {
    DistributionSummary s = caller ? callerFailureLatency : serverFailureLatency;
    if (s == null) {
      // a race makes the same meter twice: the registry returns the one it has
      if (caller) {
        s =
            callerFailureLatency =
                latency(
                    "caller_failure_latency_ms",
                    "Latency distribution of RPCs failed because of caller error.");
      } else {
        s =
            serverFailureLatency =
                latency(
                    "server_failure_latency_ms",
                    "Latency distribution of RPCs failed because of server error.");
      }
    }
    return s;
  }

  /** {@code timeout_ttl_ms}, made on first use. */
  DistributionSummary timeoutTtl() {
    DistributionSummary s = timeoutTtl;
    if (s == null) {
      s =
          timeoutTtl =
              latency(
                  "timeout_ttl_ms",
                  "TTL distribution of the RPCs passed by caller which failed due to timeout");
    }
    return s;
  }

  /** {@code stream_send_failures} or {@code stream_receive_failures} for {@code error}. */
  Counter streamFailures(boolean send, String error) {
    Map<String, Counter> counters = send ? sendFailures : receiveFailures;
    Counter c = counters.get(error);
    if (c == null) {
      c =
          counters.computeIfAbsent(
              error,
              e ->
                  Counter.builder(send ? "stream_send_failures" : "stream_receive_failures")
                      .description(
                          send
                              ? "Number streaming messages that failed to send."
                              : "Number streaming messages failed to be recieved.")
                      .tags(tags)
                      .tag("error", TagValues.scrub(e))
                      .register(registry));
    }
    return c;
  }

  private Counter counter(String name, String help) {
    return Counter.builder(name).description(help).tags(tags).register(registry);
  }

  private DistributionSummary latency(String name, String help) {
    return DistributionSummary.builder(name)
        .description(help)
        .tags(tags)
        .serviceLevelObjectives(LATENCY_BUCKETS_MS)
        .distributionStatisticBufferLength(WINDOWS)
        .register(registry);
  }

  private DistributionSummary bytes(String name, String help) {
    return DistributionSummary.builder(name)
        .description(help)
        .baseUnit("bytes")
        .tags(tags)
        .serviceLevelObjectives(BYTES_BUCKETS)
        .distributionStatisticBufferLength(WINDOWS)
        .register(registry);
  }
}
