package io.yarpc.examples;

import io.yarpc.peer.ChooserStatus;
import io.yarpc.peer.PeerChooser;
import io.yarpc.peer.PeerStatus;
import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.HdrHistogram.Histogram;

/**
 * What a benchmark prints:
 *
 * <pre>
 * calls:        300 in 1.02s, 294.1 calls/s (concurrency 3, rps unlimited)
 * successes:    298
 * errors:       2
 *   deadline-exceeded  2
 * latency of successful calls:
 *   p50    1.21ms
 *   p90    2.02ms
 *   p99    4.12ms
 *   p99.9  8.01ms
 *   max    9.33ms
 * calls per peer (round-robin):
 *   127.0.0.1:40001  100
 *   127.0.0.1:40002  100
 *   127.0.0.1:40003  100
 * </pre>
 *
 * Calls per peer are the leases the outbound's peer list gave ({@link PeerCounts}), in the list's order
 * (a peer it got no call from shows 0): a call that got no peer is in no row. An outbound whose chooser
 * is not a list (one {@code peer}) is not counted: the report names its peer.
 */
final class BenchmarkReport {
  private static final double[] PERCENTILES = {50, 90, 99, 99.9};

  private final Benchmark.Plan plan;
  private final Benchmark.Result result;
  private final Map<String, Long> perPeer;
  private final boolean counted; // whether perPeer was counted: the outbound's chooser is a list
  private final ChooserStatus chooser; // null: the outbound has no peer chooser

  /**
   * The report of {@code result}, run as {@code plan}, through {@code chooser} (null when the outbound
   * has none) whose leases {@code counts} counted.
   */
  BenchmarkReport(
      Benchmark.Plan plan, Benchmark.Result result, PeerCounts counts, PeerChooser chooser) {
    this.plan = plan;
    this.result = result;
    this.perPeer = counts.snapshot();
    this.counted = counts.counting();
    this.chooser = chooser == null ? null : chooser.introspect();
  }

  /** Prints the report to {@code out}. */
  void print(PrintStream out) {
    out.printf(
        Locale.ROOT,
        "calls:        %d in %s, %.1f calls/s (concurrency %d, rps %s)%n",
        result.calls(),
        Durations.format(result.elapsedNanos()),
        result.callsPerSecond(),
        plan.concurrency(),
        plan.rps() == 0 ? "unlimited" : String.valueOf(plan.rps()));
    out.printf("successes:    %d%n", result.calls() - result.errorCount());
    out.printf("errors:       %d%n", result.errorCount());
    int width = 0;
    for (String code : result.errors().keySet()) {
      width = Math.max(width, code.length());
    }
    for (Map.Entry<String, Long> e : result.errors().entrySet()) {
      out.printf("  %-" + width + "s  %d%n", e.getKey(), e.getValue());
    }
    Histogram latency = result.latency();
    if (latency.getTotalCount() == 0) {
      out.println("latency of successful calls: none succeeded");
    } else {
      out.println("latency of successful calls:");
      for (double p : PERCENTILES) {
        out.printf(
            "  %-5s  %s%n",
            "p" + (p == Math.rint(p) ? String.valueOf((long) p) : String.valueOf(p)),
            Durations.format(latency.getValueAtPercentile(p)));
      }
      out.printf("  %-5s  %s%n", "max", Durations.format(latency.getMaxValue()));
    }
    printPeers(out);
    out.flush();
  }

  private void printPeers(PrintStream out) {
    if (chooser == null) {
      return;
    }
    if (!counted) {
      out.printf(
          "calls per peer (%s): %s%n",
          chooser.kind(),
          chooser.peers().size() == 1
              ? "all to " + chooser.peers().get(0).identifier()
              : "not counted (only peer lists are)");
      return;
    }
    // the list's order first (the order its peers were added), then any peer it no longer holds
    Map<String, Long> rows = new LinkedHashMap<>();
    for (PeerStatus p : chooser.peers()) {
      rows.put(p.identifier(), perPeer.getOrDefault(p.identifier(), 0L));
    }
    perPeer.forEach(rows::putIfAbsent);
    out.printf("calls per peer (%s):%n", chooser.kind());
    int width = 0;
    for (String peer : rows.keySet()) {
      width = Math.max(width, peer.length());
    }
    for (Map.Entry<String, Long> e : rows.entrySet()) {
      out.printf("  %-" + width + "s  %d%n", e.getKey(), e.getValue());
    }
  }
}
