package io.yarpc.benchmarks.load;

import io.grpc.stub.StreamObserver;
import io.yarpc.benchmarks.proto.EchoMessage;
import io.yarpc.netty.internal.NettyIo;
import java.io.PrintStream;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.HdrHistogram.Histogram;

/**
 * The end-to-end load harness: in this one process, one system after the other — plain grpc-java (the
 * baseline), YARPC over gRPC (default decode, then the opt-in aliasing decode), over HTTP/1.1, over h2c
 * and over TChannel — serves and calls a unary echo of {@link EchoMessage} (a {@code bytes} payload and a
 * short token) at each payload size and in-flight count, after a warm-up; then gRPC bidirectional
 * streaming echo at each streaming size. For each cell it measures calls per second, latency percentiles
 * (HdrHistogram), heap bytes allocated per call by server threads and by client threads (see {@link
 * ThreadAccounting} for which threads are which), and CPU time per call.
 *
 * <pre>
 * java -jar yarpc-benchmarks/target/yarpc-benchmarks.jar load [--duration 10s] [--sizes 350,10240,1048576]
 *     [--inflight 1,64] [--quick] [--json path]
 * </pre>
 */
public final class LoadHarness {
  /** Name prefix of the harness's own threads, which count for neither side. */
  static final String THREAD_PREFIX = "bench-harness";

  private static final long SAMPLE_EVERY_MILLIS = 3;
  private static final int MIN_CALLS_PER_INFLIGHT = 20;

  private final LoadOptions options;
  private final PrintStream log;
  private final ThreadAccounting accounting = new ThreadAccounting();

  private LoadHarness(LoadOptions options, PrintStream log) {
    this.options = options;
    this.log = log;
  }

  /**
   * Runs the harness as the command line asks, prints the markdown tables to stdout and writes the JSON.
   *
   * @return the process exit code: 0 when every cell completed calls, 1 when some did not, 2 for bad
   *     arguments
   */
  public static int main(String... args) throws Exception {
    LoadOptions options;
    try {
      if (List.of(args).contains("--help") || List.of(args).contains("-h")) {
        System.out.println(LoadOptions.usage());
        return 0;
      }
      options = LoadOptions.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println(e.getMessage());
      System.err.println(LoadOptions.usage());
      return 2;
    }
    LoadReport report = run(options);
    System.out.println();
    System.out.println(report.toMarkdown());
    report.writeJson(options.json);
    System.out.println("JSON results: " + options.json.toAbsolutePath());
    return report.cells().stream().allMatch(CellResult::ok) ? 0 : 1;
  }

  /** Runs every system and cell {@code options} ask for, on a harness thread, and returns the results. */
  public static LoadReport run(LoadOptions options) throws Exception {
    // read once, when the first transport starts: a later change does not take
    System.setProperty(NettyIo.PROPERTY, options.io);
    AtomicReference<Object> result = new AtomicReference<>();
    Thread t =
        new Thread(
            () -> {
              try {
                result.set(new LoadHarness(options, System.err).runAll());
              } catch (Throwable e) {
                result.set(e);
              }
            },
            THREAD_PREFIX + "-main");
    t.start();
    t.join();
    Object r = result.get();
    if (r instanceof Exception) {
      throw (Exception) r;
    }
    if (r instanceof Error) {
      throw (Error) r;
    }
    return (LoadReport) r;
  }

  private BenchTls tls;

  /** The TLS every system uses, made on first use, or null for plaintext. */
  private BenchTls tls() {
    if (tls == null && !options.tls.equals("none")) {
      tls =
          BenchTls.with(
              options.tls.equals("openssl")
                  ? io.yarpc.tls.TlsProvider.OPENSSL
                  : io.yarpc.tls.TlsProvider.JDK);
    }
    return tls;
  }

  private LoadReport runAll() throws Exception {
    Map<String, Object> env = environment();
    List<CellResult> cells = new ArrayList<>();
    if (!options.prewarm.isZero()) {
      prewarm();
    }
    for (String name : options.systems) {
      accounting.reset();
      EchoSystem system = EchoSystem.create(name, tls(), options.observability);
      progress("== %s", name);
      try {
        system = startSeparated(name, system);
      } catch (Throwable e) {
        progress("   %s did not start: %s", name, e);
        for (int size : options.sizes) {
          for (int n : options.inflight) {
            cells.add(CellResult.failed(name, "unary", size, n, "did not start: " + e));
          }
        }
        closeQuietly(system);
        continue;
      }
      try {
        boolean first = true;
        for (int size : options.sizes) {
          for (int n : options.inflight) {
            CellResult c =
                runUnary(system, size, n, first ? options.warmup.multipliedBy(2) : options.warmup);
            first = false;
            cells.add(c);
            report(c);
          }
        }
        if (system.supportsStreaming()) {
          for (int size : options.streamSizes) {
            CellResult c = runStream(system, size, options.streamWindow, options.warmup);
            cells.add(c);
            report(c);
          }
        }
      } finally {
        if (options.verboseThreads
            && system instanceof YarpcSystem
            && ((YarpcSystem) system).aliasingPoolStats() != null) {
          log.println("   " + ((YarpcSystem) system).aliasingPoolStats());
        }
        closeQuietly(system);
      }
      if (options.verboseThreads) {
        CellResult last = cells.get(cells.size() - 1);
        log.println("   threads of " + name + " (last cell):");
        last.threads().forEach((thread, how) -> log.println("     " + thread + ": " + how));
      }
    }
    env.put("finished", Instant.now().toString());
    env.put(
        "loadAverageAtEnd", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    return new LoadReport(env, cells);
  }

  /**
   * Starts {@code system}; where server and client share event loops (gRPC), probes with a little load
   * while sampling stacks and, if one loop thread serves both sides, restarts the system with one more
   * spacer connection (see {@link EchoSystem#start(int)}), up to three times.
   */
  private EchoSystem startSeparated(String name, EchoSystem system) throws Exception {
    for (int spacers = 0; ; spacers++) {
      try {
        system.start(spacers);
      } catch (Throwable e) {
        closeQuietly(system);
        throw e;
      }
      if (!system.sharesEventLoops()) {
        return system;
      }
      EchoMessage probe = LoadMessages.message(350);
      if (check(system, probe) != null) {
        return system; // the first cell reports the failure
      }
      UnaryDriver driver = new UnaryDriver(system.stub(), probe);
      driver.start(1);
      warmUp(java.time.Duration.ofMillis(500));
      driver.stop(10_000);
      List<String> mixed = accounting.mixedThreads();
      if (mixed.isEmpty() || spacers == 3) {
        if (!mixed.isEmpty()) {
          progress(
              "   %s: server and client still share %s; those threads are split by sampled share",
              name, mixed);
        }
        return system;
      }
      progress(
          "   %s: server and client connections share %s; restarting with %d spacer connection(s)",
          name, mixed, spacers + 1);
      closeQuietly(system);
      accounting.reset();
      system = EchoSystem.create(name, tls(), options.observability);
    }
  }

  /** The unmeasured first pass: every system, every size, at the largest in-flight count. */
  private void prewarm() throws Exception {
    int inflight = options.inflight.stream().mapToInt(Integer::intValue).max().orElse(1);
    for (String name : options.systems) {
      EchoSystem system = EchoSystem.create(name, tls(), options.observability);
      progress("== pre-warming %s", name);
      try {
        system.start();
        for (int size : options.sizes) {
          EchoMessage request = LoadMessages.message(size);
          if (check(system, request) != null) {
            break;
          }
          UnaryDriver driver = new UnaryDriver(system.stub(), request);
          driver.start(inflight);
          Thread.sleep(options.prewarm.toMillis());
          driver.stop(60_000);
        }
      } catch (Throwable e) {
        progress("   %s did not start: %s", name, e);
      } finally {
        closeQuietly(system);
      }
    }
  }

  private CellResult runUnary(EchoSystem system, int size, int inflight, Duration warmup)
      throws Exception {
    EchoMessage request = LoadMessages.message(size);
    String check = check(system, request);
    if (check != null) {
      return CellResult.failed(system.name(), "unary", size, inflight, check);
    }
    System.gc();
    double load = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    UnaryDriver driver = new UnaryDriver(system.stub(), request);
    driver.start(inflight);
    try {
      warmUp(warmup);
      driver.intervalHistogram();
      long calls0 = driver.completed();
      long errors0 = driver.errors();
      long[] gc0 = gc();
      ThreadAccounting.Snapshot s0 = ThreadAccounting.snapshot();
      measure(() -> driver.completed() - calls0, inflight);
      ThreadAccounting.Snapshot s1 = ThreadAccounting.snapshot();
      long calls = driver.completed() - calls0;
      long errors = driver.errors() - errors0;
      Histogram h = driver.intervalHistogram();
      long[] gc1 = gc();
      Throwable err = driver.lastError();
      return result(
          system.name(),
          "unary",
          size,
          inflight,
          s0,
          s1,
          calls,
          errors,
          h,
          gc0,
          gc1,
          load,
          err == null ? null : err.toString());
    } finally {
      if (!driver.stop(60_000)) {
        progress("   calls still in flight after 60 s");
      }
    }
  }

  private CellResult runStream(EchoSystem system, int size, int window, Duration warmup)
      throws Exception {
    EchoMessage message = LoadMessages.message(size);
    System.gc();
    double load = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    StreamDriver driver = new StreamDriver(message, window);
    try {
      driver.start(system.stub());
    } catch (RuntimeException e) {
      return CellResult.failed(system.name(), "stream", size, window, e.toString());
    }
    try {
      warmUp(warmup);
      driver.intervalHistogram();
      long n0 = driver.received();
      long[] gc0 = gc();
      ThreadAccounting.Snapshot s0 = ThreadAccounting.snapshot();
      measure(() -> driver.received() - n0, window);
      ThreadAccounting.Snapshot s1 = ThreadAccounting.snapshot();
      long n = driver.received() - n0;
      Histogram h = driver.intervalHistogram();
      long[] gc1 = gc();
      Throwable err = driver.error();
      String problem = err == null ? null : err.toString();
      if (n == 0) {
        problem = "stream stalled: " + driver.describe();
        progress("   %s; thread dump follows", problem);
        dumpThreads();
      }
      return result(
          system.name(),
          "stream",
          size,
          window,
          s0,
          s1,
          n,
          err == null ? 0 : 1,
          h,
          gc0,
          gc1,
          load,
          problem);
    } finally {
      if (!driver.stop(30_000)) {
        progress("   stream did not finish within 30 s: %s", driver.describe());
      }
    }
  }

  /**
   * Waits out the measured time: the duration, and then longer (up to three times the duration) until at
   * least {@value #MIN_CALLS_PER_INFLIGHT} calls per call in flight completed. Calls in flight at either
   * end of the window allocate partly inside it and partly outside; with this many calls that blurs a
   * per-call figure by a few percent at most.
   */
  private void measure(java.util.function.LongSupplier calls, int inflight)
      throws InterruptedException {
    long start = System.nanoTime();
    Thread.sleep(options.duration.toMillis());
    long max = start + options.duration.toNanos() * 3;
    while (calls.getAsLong() < (long) MIN_CALLS_PER_INFLIGHT * inflight
        && System.nanoTime() < max) {
      Thread.sleep(50);
    }
  }

  /** Prints the stacks of the systems' threads (not the JVM's own) to the log. */
  private void dumpThreads() {
    for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
      String name = e.getKey().getName();
      if (name.startsWith("bench-") || name.startsWith("yarpc-") || name.startsWith("grpc-")) {
        log.println("   \"" + name + "\" " + e.getKey().getState());
        for (StackTraceElement f : e.getValue()) {
          log.println("       at " + f);
        }
      }
    }
  }

  /** Runs for {@code warmup} while sampling thread stacks for the attribution. */
  private void warmUp(Duration warmup) throws InterruptedException {
    long end = System.nanoTime() + warmup.toNanos();
    while (System.nanoTime() < end) {
      accounting.sample();
      Thread.sleep(SAMPLE_EVERY_MILLIS);
    }
  }

  private CellResult result(
      String system,
      String mode,
      int size,
      int inflight,
      ThreadAccounting.Snapshot s0,
      ThreadAccounting.Snapshot s1,
      long calls,
      long errors,
      Histogram h,
      long[] gc0,
      long[] gc1,
      double load,
      String error) {
    ThreadAccounting.Usage u = accounting.usage(s0, s1);
    double seconds = (s1.nanoTime() - s0.nanoTime()) / 1e9;
    double per = Math.max(1, calls);
    return new CellResult(
        system,
        mode,
        size,
        inflight,
        seconds,
        calls,
        errors,
        calls / seconds,
        h.getValueAtPercentile(50) / 1e3,
        h.getValueAtPercentile(90) / 1e3,
        h.getValueAtPercentile(99) / 1e3,
        h.getMaxValue() / 1e3,
        u.serverBytes() / per,
        u.clientBytes() / per,
        u.unattributedBytes() / per,
        u.processCpuNanos() / per / 1e3,
        u.serverCpuNanos() / per / 1e3,
        u.clientCpuNanos() / per / 1e3,
        gc1[0] - gc0[0],
        gc1[1] - gc0[1],
        load,
        errors > 0 || calls == 0 ? error : null,
        u.threads());
  }

  /**
   * Makes one call and checks the echo; returns why it failed, or null. Also makes sure connections are
   * up before the warm-up starts.
   */
  private static String check(EchoSystem system, EchoMessage request) {
    CompletableFuture<EchoMessage> f = new CompletableFuture<>();
    system
        .stub()
        .withDeadlineAfter(30, TimeUnit.SECONDS)
        .unary(
            request,
            new StreamObserver<>() {
              @Override
              public void onNext(EchoMessage value) {
                f.complete(value);
              }

              @Override
              public void onError(Throwable t) {
                f.completeExceptionally(t);
              }

              @Override
              public void onCompleted() {
                f.complete(null);
              }
            });
    try {
      EchoMessage echo = f.get(40, TimeUnit.SECONDS);
      if (echo == null || !echo.equals(request)) {
        return "the echo differs from the request";
      }
      return null;
    } catch (Exception e) {
      return "first call failed: " + (e.getCause() != null ? e.getCause() : e);
    }
  }

  /** Collections and collection milliseconds so far, over all collectors. */
  private static long[] gc() {
    long count = 0;
    long millis = 0;
    for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans()) {
      count += Math.max(0, b.getCollectionCount());
      millis += Math.max(0, b.getCollectionTime());
    }
    return new long[] {count, millis};
  }

  private Map<String, Object> environment() {
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
        "os",
        System.getProperty("os.name")
            + " "
            + System.getProperty("os.version")
            + " "
            + System.getProperty("os.arch"));
    env.put(
        "loadAverageAtStart", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    env.put("durationSeconds", options.duration.toMillis() / 1e3);
    env.put("warmupSeconds", options.warmup.toMillis() / 1e3);
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
        "server = threads named bench-server-* and yarpc-bench-server-handler-*, plus event "
            + "loops whose sampled stacks show server-side frames; client = bench-client-*, yarpc-bench-client-*, "
            + "and event loops whose stacks show client-side frames; unattributed = everything else");
    return env;
  }

  private static String describe(LoadOptions o) {
    return "--duration "
        + o.duration.toMillis()
        + "ms --warmup "
        + o.warmup.toMillis()
        + "ms --prewarm "
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

  private void report(CellResult c) {
    if (!c.ok()) {
      progress(
          "   %-6s %-9s in flight %-3d failed: %s",
          c.mode(), LoadReport.size(c.size()), c.inflight(), c.error());
      return;
    }
    progress(
        "   %-6s %-9s in flight %-3d %,10.0f/s  p50 %8.1f µs  p99 %8.1f µs  server %s  client %s  "
            + "unattributed %s  cpu %.1f µs%s",
        c.mode(),
        LoadReport.size(c.size()),
        c.inflight(),
        c.callsPerSecond(),
        c.p50Micros(),
        c.p99Micros(),
        LoadReport.bytes(c.serverBytesPerCall()),
        LoadReport.bytes(c.clientBytesPerCall()),
        LoadReport.bytes(c.unattributedBytesPerCall()),
        c.cpuMicrosPerCall(),
        c.errors() > 0 ? "  " + c.errors() + " errors: " + c.error() : "");
  }

  private void progress(String format, Object... args) {
    if (options.progress) {
      log.println(String.format(format, args));
      log.flush();
    }
  }

  private void closeQuietly(EchoSystem system) {
    try {
      system.close();
    } catch (RuntimeException e) {
      progress("   closing %s failed: %s", system.name(), e);
    }
  }
}
