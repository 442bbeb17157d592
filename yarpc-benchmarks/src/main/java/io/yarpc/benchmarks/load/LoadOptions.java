package io.yarpc.benchmarks.load;

import io.yarpc.netty.internal.NettyIo;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The load harness's options, parsed from the command line ({@code load --help} prints them). Mutable
 * fields with the defaults; {@link #parse} fills them from arguments.
 */
public final class LoadOptions {
  /** Every system, in the order they run: the plain grpc-java baseline first. */
  public static final List<String> ALL_SYSTEMS =
      List.of(
          EchoSystem.GRPC_JAVA,
          EchoSystem.YARPC_GRPC,
          EchoSystem.YARPC_GRPC_ALIASING,
          EchoSystem.YARPC_GRPC_DIRECT,
          EchoSystem.YARPC_GRPC_OBSERVED,
          EchoSystem.YARPC_HTTP,
          EchoSystem.YARPC_HTTP_DIRECT,
          EchoSystem.YARPC_H2C,
          EchoSystem.YARPC_H2C_DIRECT,
          EchoSystem.YARPC_TCHANNEL,
          EchoSystem.YARPC_TCHANNEL_DIRECT,
          EchoSystem.NETTY_HTTP,
          EchoSystem.NETTY_H2C);

  /** How long each cell is measured. */
  public Duration duration = Duration.ofSeconds(5);

  /**
   * The least time each cell runs before it is measured (the first cell of each system: twice this); the
   * warm-up goes on in 1 s windows until three consecutive windows' calls/s are within 5 % of their mean,
   * or until {@link #warmupMax}.
   */
  public Duration warmup = Duration.ofSeconds(2);

  /** The most time a cell's warm-up may take while its calls/s are not yet stable. */
  public Duration warmupMax = Duration.ofSeconds(30);

  /** Where the servers run: {@code shared} (in this JVM, beside the clients) or {@code separate}. */
  public String processes = "shared";

  /**
   * JVM flags of the server processes with {@code --processes separate}, or null for the harness JVM's
   * own flags.
   */
  public List<String> serverJvmOpts;

  /**
   * How long each system runs each size, unmeasured, in a first pass over all systems before the measured
   * pass, so that the JIT has compiled every system's code (and the code they share) before anything is
   * measured; zero skips the pass.
   */
  public Duration prewarm = Duration.ofSeconds(1);

  /** Payload sizes of the unary echo, in bytes. */
  public List<Integer> sizes = List.of(350, 10240, 1048576);

  /** Calls each client keeps in flight. */
  public List<Integer> inflight = List.of(1, 64);

  /**
   * The Netty I/O ({@code auto}, {@code epoll}, {@code io_uring}, {@code nio}): set as the system property
   * {@value NettyIo#PROPERTY} before the first transport starts.
   */
  public String io = System.getProperty(NettyIo.PROPERTY, NettyIo.DEFAULT_MODE);

  /** The systems to run (see {@link EchoSystem} for the names). */
  public List<String> systems = ALL_SYSTEMS;

  /** Payload sizes of the gRPC streaming runs; empty skips streaming. */
  public List<Integer> streamSizes = List.of(350, 1048576);

  /** Messages a stream keeps outstanding (sent, echo not yet received). */
  public int streamWindow = 16;

  /** Where the JSON results go. */
  public Path json = Path.of("yarpc-benchmarks", "target", "load-results.json");

  /** Prints how every thread was attributed (server, client or unattributed) after each system. */
  public boolean verboseThreads;

  /** Whether to print progress to stderr. */
  public boolean progress = true;

  /** TLS for every system: {@code none} (plaintext), {@code jdk} or {@code openssl}. */
  public String tls = "none";

  /**
   * Observability on YARPC's server side: {@code none}, or {@code on} — metrics (a Prometheus registry),
   * call logs (successes off) and tracing (an OpenTelemetry SDK whose sampler samples nothing).
   */
  public String observability = "none";

  /** The usage text. */
  public static String usage() {
    return String.join(
        "\n",
        "usage: java -jar yarpc-benchmarks.jar load [options]",
        "  --duration D        measured time per cell (default 5s; units ms, s, m)",
        "  --warmup D          least warm-up per cell (default 2s; doubled for a system's first cell); it goes",
        "                      on in 1 s windows until 3 windows' calls/s are within 5% of their mean",
        "  --warmup-max D      most warm-up per cell when calls/s do not settle (default 30s)",
        "  --processes P       shared (default): servers in this JVM; separate: each system's server in a",
        "                      child JVM (this JVM's java, class path and flags), its whole-process CPU and",
        "                      heap per call reported as the server's",
        "  --server-jvm-opts S the child JVMs' flags instead of this JVM's, e.g. '-Xmx2g -XX:+UseParallelGC'",
        "  --prewarm D         unmeasured first pass: each system, each size, for D (default 1s; 0 skips)",
        "  --sizes LIST        unary payload sizes in bytes (default 350,10240,1048576)",
        "  --inflight LIST     calls in flight per client (default 1,64)",
        "  --systems LIST      any of " + String.join(",", ALL_SYSTEMS) + " (default all)",
        "  --stream-sizes LIST gRPC streaming payload sizes (default 350,1048576; 'none' skips streaming)",
        "  --stream-window N   messages outstanding per stream (default 16)",
        "  --json PATH         JSON results (default yarpc-benchmarks/target/load-results.json)",
        "  --tls P             none (default), jdk or openssl: every system over TLS with that provider",
        "                      (the bare Netty rows have none: they are left out of the default systems)",
        "  --io M              auto (default: epoll when available, else nio), nio, epoll or io_uring:",
        "                      the Netty I/O of YARPC's transports and the bare Netty rows (yarpc.io)",
        "  --observability O   none (default), on, or a list of metrics,logs,tracing: YARPC servers with",
        "                      metrics, call logs (successes off) and tracing (sampled out)",
        "  --quick             --duration 1s --warmup 500ms --warmup-max 5s --prewarm 300ms",
        "  --verbose-threads   print each thread's attribution",
        "  --quiet             no progress output");
  }

  /**
   * Options from {@code args}.
   *
   * @throws IllegalArgumentException for an unknown option or a bad value
   */
  public static LoadOptions parse(String... args) {
    LoadOptions o = parseArguments(args);
    if (o.serverJvmOpts != null && !o.separate()) {
      throw new IllegalArgumentException("--server-jvm-opts needs --processes separate");
    }
    return o;
  }

  /** Whether each system's server runs in a child JVM. */
  public boolean separate() {
    return processes.equals("separate");
  }

  private static LoadOptions parseArguments(String... args) {
    LoadOptions o = new LoadOptions();
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      String value = null;
      int eq = a.indexOf('=');
      if (a.startsWith("--") && eq > 0) {
        value = a.substring(eq + 1);
        a = a.substring(0, eq);
      }
      switch (a) {
        case "--quick":
          o.duration = Duration.ofSeconds(1);
          o.warmup = Duration.ofMillis(500);
          o.warmupMax = Duration.ofSeconds(5);
          o.prewarm = Duration.ofMillis(300);
          break;
        case "--verbose-threads":
          o.verboseThreads = true;
          break;
        case "--quiet":
          o.progress = false;
          break;
        case "--duration":
        case "--warmup":
        case "--warmup-max":
        case "--processes":
        case "--server-jvm-opts":
        case "--prewarm":
        case "--sizes":
        case "--inflight":
        case "--systems":
        case "--stream-sizes":
        case "--stream-window":
        case "--json":
        case "--tls":
        case "--io":
        case "--observability":
          if (value == null) {
            if (i + 1 >= args.length) {
              throw new IllegalArgumentException(a + " needs a value");
            }
            value = args[++i];
          }
          o.set(a, value);
          break;
        default:
          throw new IllegalArgumentException("unknown option " + a);
      }
    }
    return o;
  }

  private void set(String option, String value) {
    switch (option) {
      case "--duration":
        duration = duration(value);
        break;
      case "--warmup":
        warmup = duration(value);
        break;
      case "--warmup-max":
        warmupMax = duration(value);
        break;
      case "--processes":
        if (!List.of("shared", "separate").contains(value)) {
          throw new IllegalArgumentException("--processes must be shared or separate: " + value);
        }
        processes = value;
        break;
      case "--server-jvm-opts":
        serverJvmOpts = value.isBlank() ? List.of() : List.of(value.trim().split("\\s+"));
        break;
      case "--prewarm":
        prewarm = duration(value);
        break;
      case "--sizes":
        sizes = ints(value, 0);
        break;
      case "--inflight":
        inflight = ints(value, 1);
        break;
      case "--systems":
        List<String> s = new ArrayList<>();
        for (String name : value.split(",")) {
          String n = name.trim();
          if (!ALL_SYSTEMS.contains(n)) {
            throw new IllegalArgumentException("unknown system " + n + "; known: " + ALL_SYSTEMS);
          }
          s.add(n);
        }
        systems = List.copyOf(s);
        break;
      case "--stream-sizes":
        streamSizes = value.equals("none") ? List.of() : ints(value, 0);
        break;
      case "--stream-window":
        streamWindow = ints(value, 1).get(0);
        break;
      case "--json":
        json = Path.of(value);
        break;
      case "--tls":
        if (!List.of("none", "jdk", "openssl").contains(value)) {
          throw new IllegalArgumentException("--tls must be none, jdk or openssl: " + value);
        }
        tls = value;
        if (!value.equals("none") && systems == ALL_SYSTEMS) {
          systems =
              ALL_SYSTEMS.stream()
                  .filter(n -> !n.equals(EchoSystem.NETTY_HTTP) && !n.equals(EchoSystem.NETTY_H2C))
                  .collect(java.util.stream.Collectors.toUnmodifiableList());
        }
        break;
      case "--io":
        NettyIo.of(value); // refuses an unknown name
        io = value;
        break;
      case "--observability":
        for (String part : value.split(",")) {
          if (!List.of("none", "on", "metrics", "logs", "tracing").contains(part)) {
            throw new IllegalArgumentException(
                "--observability takes none, on, or a list of metrics, logs, tracing: " + value);
          }
        }
        observability = value;
        break;
      default:
        throw new IllegalArgumentException(option);
    }
  }

  /** {@code 10s}, {@code 500ms}, {@code 2m}, or a number of seconds. */
  static Duration duration(String s) {
    String v = s.trim().toLowerCase(Locale.ROOT);
    try {
      if (v.endsWith("ms")) {
        return Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
      }
      if (v.endsWith("s")) {
        return Duration.ofMillis(
            Math.round(Double.parseDouble(v.substring(0, v.length() - 1)) * 1000));
      }
      if (v.endsWith("m")) {
        return Duration.ofSeconds(
            Math.round(Double.parseDouble(v.substring(0, v.length() - 1)) * 60));
      }
      return Duration.ofMillis(Math.round(Double.parseDouble(v) * 1000));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("not a duration: " + s);
    }
  }

  private static List<Integer> ints(String s, int min) {
    List<Integer> out = new ArrayList<>();
    for (String part : s.split(",")) {
      int n;
      try {
        n = Integer.parseInt(part.trim());
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("not a number: " + part);
      }
      if (n < min) {
        throw new IllegalArgumentException("must be at least " + min + ": " + n);
      }
      out.add(n);
    }
    if (out.isEmpty()) {
      throw new IllegalArgumentException("empty list");
    }
    return List.copyOf(out);
  }
}
