package io.yarpc.benchmarks.load;

import io.grpc.stub.StreamObserver;
import io.yarpc.benchmarks.proto.EchoMessage;
import io.yarpc.netty.internal.NettyIo;
import java.io.IOException;
import java.io.PrintStream;
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
import java.util.function.LongSupplier;
import org.HdrHistogram.Histogram;

/**
 * The end-to-end load harness: in this one process, one system after the other — plain grpc-java (the
 * baseline), YARPC over gRPC (default decode, then the opt-in aliasing decode), over HTTP/1.1, over h2c
 * and over TChannel — serves and calls a unary echo of {@link EchoMessage} (a {@code bytes} payload and a
 * short token) at each payload size and in-flight count, after a warm-up; then gRPC bidirectional
 * streaming echo at each streaming size. For each cell it measures calls per second, latency percentiles
 * (HdrHistogram), heap bytes allocated per call by server threads and by client threads (see {@link
 * ThreadAccounting} for which threads are which), and CPU time per call. Each cell warms up until its
 * calls/s are stable ({@link WarmUp}). With {@code --processes separate} each system's server runs in a
 * child JVM instead ({@link ServerChild}), and the server's figures are that whole process's.
 *
 * <pre>
 * java -jar yarpc-benchmarks/target/yarpc-benchmarks.jar load [--duration 10s] [--sizes 350,10240,1048576]
 *     [--inflight 1,64] [--processes shared|separate] [--quick] [--json path]
 * </pre>
 */
public final class LoadHarness {
  /** Name prefix of the harness's own threads, which count for neither side. */
  static final String THREAD_PREFIX = "bench-harness";

  private static final int MIN_CALLS_PER_INFLIGHT = 20;

  private final LoadOptions options;
  private final PrintStream log;
  private final ThreadAccounting accounting = new ThreadAccounting();
  private final WarmUp warmUp = new WarmUp(accounting::sample);

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

  /**
   * The {@code report} subcommand: prints the results tables of a JSON results file (see {@link
   * ResultsTable}).
   *
   * @return the process exit code: 0, 1 when the file cannot be read, 2 for bad arguments
   */
  public static int report(String... args) {
    return ResultsTable.main(System.out, System.err, args);
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
    Map<String, Object> env = RunEnvironment.of(options);
    List<CellResult> cells = new ArrayList<>();
    if (!options.prewarm.isZero()) {
      prewarm();
    }
    for (String name : options.systems) {
      accounting.reset();
      progress("== %s", name);
      Running running;
      try {
        running = start(name, true);
      } catch (Throwable e) {
        progress("   %s did not start: %s", name, e);
        for (int size : options.sizes) {
          for (int n : options.inflight) {
            cells.add(CellResult.failed(name, "unary", size, n, "did not start: " + e));
          }
        }
        continue;
      }
      EchoSystem system = running.system;
      try {
        boolean first = true;
        for (int size : options.sizes) {
          for (int n : options.inflight) {
            CellResult c =
                runUnary(running, size, n, first ? options.warmup.multipliedBy(2) : options.warmup);
            first = false;
            cells.add(c);
            report(c);
          }
        }
        if (system.supportsStreaming()) {
          for (int size : options.streamSizes) {
            CellResult c = runStream(running, size, options.streamWindow, options.warmup);
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
        running.close();
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
    if (serverCommand != null) {
      env.put("serverCommand", serverCommand);
    }
    return new LoadReport(env, cells);
  }

  /** A started system: its client here and its server here too, or in {@link #server}. */
  private final class Running implements AutoCloseable {
    final EchoSystem system;

    /** The server's process with {@code --processes separate}, else null. */
    final ServerChild server;

    Running(EchoSystem system, ServerChild server) {
      this.system = system;
      this.server = server;
    }

    @Override
    public void close() {
      closeQuietly(system);
      if (server != null) {
        server.close();
      }
    }
  }

  /** The first server command line of the run (with {@code --processes separate}). */
  private List<String> serverCommand;

  /**
   * Starts the system called {@code name}: both sides here ({@code shared}; with {@code probe}, keeping
   * gRPC's sides on separate loops, see {@link #startSeparated}), or its server in a child JVM and its
   * client here ({@code separate}).
   */
  private Running start(String name, boolean probe) throws Exception {
    EchoSystem system = EchoSystem.create(name, tls(), options.observability);
    if (!options.separate()) {
      if (probe) {
        return new Running(startSeparated(name, system), null);
      }
      try {
        system.start();
      } catch (Throwable e) {
        closeQuietly(system);
        throw e;
      }
      return new Running(system, null);
    }
    ServerChild server =
        ServerChild.start(name, tls(), options.observability, options.io, options.serverJvmOpts);
    try {
      system.startClient(server.port(), 0);
    } catch (Throwable e) {
      closeQuietly(system);
      server.close();
      throw e;
    }
    if (serverCommand == null) {
      serverCommand = server.command();
    }
    return new Running(system, server);
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
      warmUp.sample(Duration.ofMillis(500));
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
      progress("== pre-warming %s", name);
      Running running;
      try {
        running = start(name, false);
      } catch (Throwable e) {
        progress("   %s did not start: %s", name, e);
        continue;
      }
      try {
        for (int size : options.sizes) {
          EchoMessage request = LoadMessages.message(size);
          if (check(running.system, request) != null) {
            break;
          }
          UnaryDriver driver = new UnaryDriver(running.system.stub(), request);
          driver.start(inflight);
          Thread.sleep(options.prewarm.toMillis());
          driver.stop(60_000);
        }
      } finally {
        running.close();
      }
    }
  }

  /** The counters at one edge of a measured window, in this process and the server's. */
  private static final class Edge {
    final ThreadAccounting.Snapshot threads;
    final ProcessCounters local;

    /** The server process's counters, or null when the server runs here. */
    final ProcessCounters server;

    final Histogram histogram;

    Edge(Running running, Histogram histogram) throws IOException {
      this.threads = ThreadAccounting.snapshot();
      this.local = ProcessCounters.now();
      this.server = running.server == null ? null : running.server.counters();
      this.histogram = histogram;
    }
  }

  /** Collects garbage in both processes and returns the load average, before a cell starts. */
  private static double settle(Running running) throws IOException {
    System.gc();
    if (running.server != null) {
      running.server.gc();
    }
    return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
  }

  private CellResult runUnary(Running running, int size, int inflight, Duration warmup)
      throws Exception {
    EchoSystem system = running.system;
    EchoMessage request = LoadMessages.message(size);
    String check = check(system, request);
    if (check != null) {
      return CellResult.failed(system.name(), "unary", size, inflight, check);
    }
    double load = settle(running);
    UnaryDriver driver = new UnaryDriver(system.stub(), request);
    driver.start(inflight);
    try {
      WarmUp.Result warm = warmUp.run(warmup, options.warmupMax, driver::completed);
      driver.intervalHistogram();
      long calls0 = driver.completed();
      long errors0 = driver.errors();
      Edge start = new Edge(running, null);
      measure(() -> driver.completed() - calls0, inflight);
      Edge end = new Edge(running, driver.intervalHistogram());
      long calls = driver.completed() - calls0;
      long errors = driver.errors() - errors0;
      Throwable err = driver.lastError();
      return result(
          running,
          "unary",
          size,
          inflight,
          warm,
          start,
          end,
          calls,
          errors,
          load,
          err == null ? null : err.toString());
    } finally {
      if (!driver.stop(60_000)) {
        progress("   calls still in flight after 60 s");
      }
    }
  }

  private CellResult runStream(Running running, int size, int window, Duration warmup)
      throws Exception {
    EchoSystem system = running.system;
    EchoMessage message = LoadMessages.message(size);
    double load = settle(running);
    StreamDriver driver = new StreamDriver(message, window);
    try {
      driver.start(system.stub());
    } catch (RuntimeException e) {
      return CellResult.failed(system.name(), "stream", size, window, e.toString());
    }
    try {
      WarmUp.Result warm = warmUp.run(warmup, options.warmupMax, driver::received);
      driver.intervalHistogram();
      long n0 = driver.received();
      Edge start = new Edge(running, null);
      measure(() -> driver.received() - n0, window);
      Edge end = new Edge(running, driver.intervalHistogram());
      long n = driver.received() - n0;
      Throwable err = driver.error();
      String problem = err == null ? null : err.toString();
      if (n == 0) {
        problem = "stream stalled: " + driver.describe();
        progress("   %s; thread dump follows", problem);
        dumpThreads();
      }
      return result(
          running, "stream", size, window, warm, start, end, n, err == null ? 0 : 1, load, problem);
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
  private void measure(LongSupplier calls, int inflight) throws InterruptedException {
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

  private CellResult result(
      Running running,
      String mode,
      int size,
      int inflight,
      WarmUp.Result warm,
      Edge start,
      Edge end,
      long calls,
      long errors,
      double load,
      String error) {
    ThreadAccounting.Usage u = accounting.usage(start.threads, end.threads);
    ProcessCounters local = end.local.minus(start.local);
    double seconds = (end.threads.nanoTime() - start.threads.nanoTime()) / 1e9;
    double per = Math.max(1, calls);
    double serverBytes = u.serverBytes();
    double serverCpu = u.serverCpuNanos();
    double cpu = u.processCpuNanos();
    long gcCount = local.gcCount();
    long gcMillis = local.gcMillis();
    Map<String, String> threads = u.threads();
    if (start.server != null) {
      // the whole server process: every thread, GC and JIT included
      ProcessCounters server = end.server.minus(start.server);
      serverBytes = server.allocatedBytes();
      serverCpu = server.cpuNanos();
      cpu += server.cpuNanos();
      gcCount += server.gcCount();
      gcMillis += server.gcMillis();
      threads = new LinkedHashMap<>(threads);
      threads.put(
          "server process " + running.server.pid(),
          String.format(
              "server (whole process) %d B, %d ms CPU, %d GCs (%d ms)",
              server.allocatedBytes(),
              server.cpuNanos() / 1_000_000,
              server.gcCount(),
              server.gcMillis()));
    }
    Histogram h = end.histogram;
    return new CellResult(
        running.system.name(),
        mode,
        size,
        inflight,
        seconds,
        warm.seconds(),
        warm.stable(),
        calls,
        errors,
        calls / seconds,
        h.getValueAtPercentile(50) / 1e3,
        h.getValueAtPercentile(90) / 1e3,
        h.getValueAtPercentile(99) / 1e3,
        h.getMaxValue() / 1e3,
        serverBytes / per,
        u.clientBytes() / per,
        u.unattributedBytes() / per,
        cpu / per / 1e3,
        serverCpu / per / 1e3,
        u.clientCpuNanos() / per / 1e3,
        gcCount,
        gcMillis,
        load,
        errors > 0 || calls == 0 ? error : null,
        threads);
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

  private void report(CellResult c) {
    if (!c.ok()) {
      progress(
          "   %-6s %-9s in flight %-3d failed: %s",
          c.mode(), ResultsTable.size(c.size()), c.inflight(), c.error());
      return;
    }
    progress(
        "   %-6s %-9s in flight %-3d %,10.0f/s  p50 %8.1f µs  p99 %8.1f µs  server %s %.1f µs  "
            + "client %s  unattributed %s  cpu %.1f µs  warm-up %.1f s%s%s",
        c.mode(),
        ResultsTable.size(c.size()),
        c.inflight(),
        c.callsPerSecond(),
        c.p50Micros(),
        c.p99Micros(),
        ResultsTable.bytes(c.serverBytesPerCall()),
        c.serverCpuMicrosPerCall(),
        ResultsTable.bytes(c.clientBytesPerCall()),
        ResultsTable.bytes(c.unattributedBytesPerCall()),
        c.cpuMicrosPerCall(),
        c.warmupSeconds(),
        c.warmupStable() ? "" : " (not stable)",
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
