package io.yarpc.benchmarks.load;

import io.yarpc.netty.internal.NettyIo;
import java.lang.management.ManagementFactory;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code environment} of a results file: when the run started, its command line and settings, and the
 * machine (JVM, cores, memory, OS, load average). The harness adds the end time, the load average at the
 * end and, with {@code --processes separate}, the server processes' command line.
 */
final class RunEnvironment {
  private RunEnvironment() {}

  /** The settings of a run with {@code options} and the machine it runs on, as the JSON records them. */
  static Map<String, Object> of(LoadOptions options) {
    Map<String, Object> env = new LinkedHashMap<>();
    env.put("started", Instant.now().toString());
    env.put(
        "command",
        "java -jar yarpc-benchmarks/target/yarpc-benchmarks.jar load " + describe(options));
    env.put(
        "java",
        System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
    env.put("jvmArguments", ManagementFactory.getRuntimeMXBean().getInputArguments());
    env.put("maxHeapBytes", Runtime.getRuntime().maxMemory());
    env.put("processors", Runtime.getRuntime().availableProcessors());
    env.put(
        "memoryBytes",
        ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
            .getTotalMemorySize());
    env.put(
        "os",
        System.getProperty("os.name")
            + " "
            + System.getProperty("os.version")
            + " "
            + System.getProperty("os.arch"));
    env.put(
        "loadAverageAtStart", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    env.put("durationSeconds", options.duration.toMillis() / 1e3);
    env.put("processes", options.processes);
    env.put("warmupMinSeconds", options.warmup.toMillis() / 1e3);
    env.put("warmupMaxSeconds", options.warmupMax.toMillis() / 1e3);
    env.put("prewarmSeconds", options.prewarm.toMillis() / 1e3);
    env.put("sizes", options.sizes);
    env.put("inflight", options.inflight);
    env.put("systems", options.systems);
    env.put("tls", options.tls);
    env.put("io", NettyIo.get().name());
    env.put("observability", options.observability);
    env.put("streamSizes", options.streamSizes);
    env.put("streamWindow", options.streamWindow);
    env.put(
        "attribution",
        (options.separate()
                ? "server = the whole server process (every thread, GC and JIT included); "
                : "server = threads named bench-server-* and yarpc-bench-server-handler-*, plus event "
                    + "loops whose sampled stacks show server-side frames; ")
            + "client = bench-client-*, yarpc-bench-client-*, "
            + "and event loops whose stacks show client-side frames; unattributed = everything else");
    return env;
  }

  private static String describe(LoadOptions o) {
    return "--duration "
        + o.duration.toMillis()
        + "ms --warmup "
        + o.warmup.toMillis()
        + "ms --warmup-max "
        + o.warmupMax.toMillis()
        + "ms --processes "
        + o.processes
        + (o.serverJvmOpts == null
            ? ""
            : " --server-jvm-opts '" + String.join(" ", o.serverJvmOpts) + "'")
        + " --prewarm "
        + o.prewarm.toMillis()
        + "ms --sizes "
        + join(o.sizes)
        + " --inflight "
        + join(o.inflight)
        + " --systems "
        + String.join(",", o.systems)
        + " --stream-sizes "
        + (o.streamSizes.isEmpty() ? "none" : join(o.streamSizes))
        + " --stream-window "
        + o.streamWindow
        + " --io "
        + o.io;
  }

  private static String join(List<Integer> l) {
    StringBuilder sb = new StringBuilder();
    for (int i : l) {
      sb.append(sb.length() == 0 ? "" : ",").append(i);
    }
    return sb.toString();
  }
}
