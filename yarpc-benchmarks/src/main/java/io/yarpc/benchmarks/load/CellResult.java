package io.yarpc.benchmarks.load;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The measurements of one cell: one system, one mode ({@code unary} or {@code stream}), one payload size,
 * one in-flight count (for streams: the window of outstanding messages). "Per call" means per completed
 * call, or per echoed message for streams.
 *
 * @param system the system's name
 * @param mode {@code unary} or {@code stream}
 * @param size payload bytes
 * @param inflight calls in flight (unary) or messages outstanding (stream)
 * @param seconds measured seconds
 * @param warmupSeconds how long the cell warmed up before it was measured
 * @param warmupStable whether its calls/s settled in the warm-up (see {@link WarmUp}); false when the
 *     warm-up ended at its maximum
 * @param calls calls completed (messages echoed) in the measured time
 * @param errors calls failed in the measured time
 * @param callsPerSecond calls (messages) per second
 * @param p50Micros median latency, microseconds
 * @param p90Micros 90th percentile latency, microseconds
 * @param p99Micros 99th percentile latency, microseconds
 * @param maxMicros largest latency, microseconds
 * @param serverBytesPerCall heap bytes allocated per call by server threads (with {@code --processes
 *     separate}: by the whole server process)
 * @param clientBytesPerCall heap bytes allocated per call by client threads
 * @param unattributedBytesPerCall heap bytes allocated per call by threads of neither side
 * @param cpuMicrosPerCall process CPU time per call (all threads, GC and JIT included; with {@code
 *     --processes separate}, of both processes), microseconds
 * @param serverCpuMicrosPerCall CPU time of server threads per call (with {@code --processes separate}:
 *     of the whole server process, GC and JIT included), microseconds
 * @param clientCpuMicrosPerCall CPU time of client threads per call, microseconds
 * @param gcCount garbage collections in the measured time (in both processes when separate)
 * @param gcMillis milliseconds the collectors reported in the measured time (both processes)
 * @param loadAverage the system load average when the cell started
 * @param error why the cell failed or had errors, or null
 * @param threads how each thread that did work was attributed
 */
public record CellResult(
    String system,
    String mode,
    int size,
    int inflight,
    double seconds,
    double warmupSeconds,
    boolean warmupStable,
    long calls,
    long errors,
    double callsPerSecond,
    double p50Micros,
    double p90Micros,
    double p99Micros,
    double maxMicros,
    double serverBytesPerCall,
    double clientBytesPerCall,
    double unattributedBytesPerCall,
    double cpuMicrosPerCall,
    double serverCpuMicrosPerCall,
    double clientCpuMicrosPerCall,
    long gcCount,
    long gcMillis,
    double loadAverage,
    String error,
    Map<String, String> threads) {

  /** A cell that could not run. */
  static CellResult failed(String system, String mode, int size, int inflight, String error) {
    return new CellResult(
        system, mode, size, inflight, 0, 0, false, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1,
        error, Map.of());
  }

  /** Whether the cell measured anything. */
  public boolean ok() {
    return calls > 0;
  }

  /** The fields as a JSON object (ordered), with ratios to {@code baseline} when there is one. */
  Map<String, Object> toJson(CellResult baseline, boolean withThreads) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("system", system);
    m.put("mode", mode);
    m.put("size", size);
    m.put(mode.equals("stream") ? "window" : "inflight", inflight);
    m.put("seconds", round(seconds, 3));
    m.put("warmupSeconds", round(warmupSeconds, 3));
    m.put("warmupStable", warmupStable);
    m.put("calls", calls);
    m.put("errors", errors);
    m.put("callsPerSecond", round(callsPerSecond, 1));
    m.put(
        "latencyMicros",
        Map.of(
            "p50",
            round(p50Micros, 1),
            "p90",
            round(p90Micros, 1),
            "p99",
            round(p99Micros, 1),
            "max",
            round(maxMicros, 1)));
    m.put("serverBytesPerCall", Math.round(serverBytesPerCall));
    m.put("clientBytesPerCall", Math.round(clientBytesPerCall));
    m.put("unattributedBytesPerCall", Math.round(unattributedBytesPerCall));
    m.put("cpuMicrosPerCall", round(cpuMicrosPerCall, 2));
    m.put("serverCpuMicrosPerCall", round(serverCpuMicrosPerCall, 2));
    m.put("clientCpuMicrosPerCall", round(clientCpuMicrosPerCall, 2));
    m.put("gcCount", gcCount);
    m.put("gcMillis", gcMillis);
    m.put("loadAverage", round(loadAverage, 2));
    if (baseline != null && baseline.ok() && ok()) {
      Map<String, Object> r = new LinkedHashMap<>();
      r.put("callsPerSecond", ratio(callsPerSecond, baseline.callsPerSecond));
      r.put("p50", ratio(p50Micros, baseline.p50Micros));
      r.put("p99", ratio(p99Micros, baseline.p99Micros));
      r.put("serverBytesPerCall", ratio(serverBytesPerCall, baseline.serverBytesPerCall));
      r.put("clientBytesPerCall", ratio(clientBytesPerCall, baseline.clientBytesPerCall));
      r.put("serverCpuPerCall", ratio(serverCpuMicrosPerCall, baseline.serverCpuMicrosPerCall));
      r.put("clientCpuPerCall", ratio(clientCpuMicrosPerCall, baseline.clientCpuMicrosPerCall));
      r.put("cpuPerCall", ratio(cpuMicrosPerCall, baseline.cpuMicrosPerCall));
      m.put("ratioToGrpcJava", r);
    } else {
      m.put("ratioToGrpcJava", null);
    }
    m.put("error", error);
    if (withThreads) {
      m.put("threads", threads);
    }
    return m;
  }

  /**
   * The cell a {@link #toJson} object describes (ratios are not read: they follow from the cells); fields
   * missing from older files read as zero.
   */
  static CellResult fromJson(JsonObject o) {
    String mode = string(o, "mode");
    JsonObject latency =
        o.has("latencyMicros") ? o.getAsJsonObject("latencyMicros") : new JsonObject();
    Map<String, String> threads = new LinkedHashMap<>();
    if (o.has("threads") && o.get("threads").isJsonObject()) {
      o.getAsJsonObject("threads")
          .entrySet()
          .forEach(e -> threads.put(e.getKey(), e.getValue().getAsString()));
    }
    return new CellResult(
        string(o, "system"),
        mode,
        (int) number(o, "size"),
        (int) number(o, "stream".equals(mode) ? "window" : "inflight"),
        number(o, "seconds"),
        number(o, "warmupSeconds"),
        o.has("warmupStable") && o.get("warmupStable").getAsBoolean(),
        (long) number(o, "calls"),
        (long) number(o, "errors"),
        number(o, "callsPerSecond"),
        number(latency, "p50"),
        number(latency, "p90"),
        number(latency, "p99"),
        number(latency, "max"),
        number(o, "serverBytesPerCall"),
        number(o, "clientBytesPerCall"),
        number(o, "unattributedBytesPerCall"),
        number(o, "cpuMicrosPerCall"),
        number(o, "serverCpuMicrosPerCall"),
        number(o, "clientCpuMicrosPerCall"),
        (long) number(o, "gcCount"),
        (long) number(o, "gcMillis"),
        number(o, "loadAverage"),
        string(o, "error"),
        threads);
  }

  private static double number(JsonObject o, String key) {
    JsonElement e = o.get(key);
    return e == null || e.isJsonNull() ? 0 : e.getAsDouble();
  }

  private static String string(JsonObject o, String key) {
    JsonElement e = o.get(key);
    return e == null || e.isJsonNull() ? null : e.getAsString();
  }

  static Double ratio(double value, double base) {
    return base > 0 ? round(value / base, 3) : null;
  }

  static double round(double v, int digits) {
    double f = Math.pow(10, digits);
    return Math.round(v * f) / f;
  }
}
