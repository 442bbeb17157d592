package io.yarpc.examples;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.yarpc.Dispatcher;
import io.yarpc.config.ConfigException;
import io.yarpc.config.YarpcConfig;
import io.yarpc.encoding.protobuf.ProtobufProcedures;
import io.yarpc.examples.FlagSet.Flag;
import io.yarpc.examples.echo.EchoService;
import io.yarpc.examples.keyvalue.KeyValueService;
import io.yarpc.observability.admin.AdminServer;
import io.yarpc.observability.metrics.YarpcMetrics;
import io.yarpc.tls.TlsConfig;
import io.yarpc.tls.TlsMode;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.grpc.GrpcInbound;
import io.yarpc.transport.grpc.GrpcTransport;
import io.yarpc.transport.http.HttpInbound;
import io.yarpc.transport.http.HttpTransport;
import io.yarpc.transport.tchannel.TChannelInbound;
import io.yarpc.transport.tchannel.TChannelTransport;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.function.Function;

/**
 * The {@code serve} command: one dispatcher named {@value #SERVICE} serving, over HTTP, gRPC and TChannel at
 * once,
 *
 * <ul>
 *   <li>the keyvalue service ({@link KeyValueService}, protobuf: {@code
 *       yarpc.examples.keyvalue.KeyValue::GetValue}, {@code ::SetValue}, {@code ::Watch});
 *   <li>the crossdock-style procedures of {@link TestSubject}: json {@code echo}, raw {@code echo/raw},
 *       {@code sleep/raw}, {@code waitfortimeout/raw}, json {@code unexpected-error};
 *   <li>the echo service ({@link EchoService}, protobuf: {@code yarpc.examples.echo.Echo::Echo}).
 * </ul>
 *
 * Every inbound also answers health checks (HTTP {@code GET /health}; gRPC {@code grpc.health.v1.Health})
 * and the gRPC inbound serves server reflection, all on by default. With {@code --admin-port} an {@link
 * AdminServer} listens on that port too: {@code /debug/yarpc} (and {@code .json}), {@code /metrics} from
 * a Prometheus registry, {@code /health}.
 *
 * <p>The inbounds come from the flags (one of each transport, ports and TLS alike) or, with {@code
 * --config FILE}, from a yarpc configuration file ({@link YarpcConfig}; {@code examples/config/yarpc.yaml}
 * is one), which may declare any inbounds, outbounds and transport settings.
 *
 * <p>{@link #command()} is the {@code serve} command: it prints the addresses and a curl line and runs until the JVM is asked to stop
 * (SIGINT, SIGTERM): a shutdown hook stops the dispatcher, which drains calls in flight. {@link #start}
 * and {@link #startFromConfig} start one in-process (tests); {@link #close()} stops it.
 */
final class Serve implements AutoCloseable {
  /** The service name every client calls. */
  static final String SERVICE = "yarpc-test";

  private final Dispatcher dispatcher;
  private final HttpTransport http; // these three are null when the inbounds come from a file
  private final GrpcTransport grpc;
  private final TChannelTransport tchannel;
  private final HttpInbound httpInbound; // null when a file declares no inbound of that transport
  private final GrpcInbound grpcInbound;
  private final TChannelInbound tchannelInbound;
  private final TlsMode tlsMode;
  private final String host;
  private final int adminPort; // NO_ADMIN: none
  private final PrometheusMeterRegistry registry; // null without an admin port
  private volatile AdminServer admin;

  /** The admin port that means: no admin listener. */
  static final int NO_ADMIN = -1;

  /**
   * The service with the inbounds {@code builder} has; {@code http}, {@code grpc} and {@code tchannel}
   * are the transports this class made for them (null for a file's, which the dispatcher owns); {@code
   * registry} is the admin listener's (null without one), into which {@code builder} records its calls'
   * metrics already.
   */
  private Serve(
      Dispatcher.Builder builder,
      HttpTransport http,
      GrpcTransport grpc,
      TChannelTransport tchannel,
      String host,
      int adminPort,
      PrometheusMeterRegistry registry) {
    this.http = http;
    this.grpc = grpc;
    this.tchannel = tchannel;
    this.host = host;
    this.adminPort = adminPort;
    this.registry = registry;
    dispatcher = builder.build();
    httpInbound = first(HttpInbound.class);
    grpcInbound = first(GrpcInbound.class);
    tchannelInbound = first(TChannelInbound.class);
    tlsMode = httpInbound == null ? TlsMode.DISABLED : httpInbound.tlsMode();
    dispatcher.register(TestSubject.procedures());
    dispatcher.register(ProtobufProcedures.of(new KeyValueService()));
    dispatcher.register(ProtobufProcedures.of(new EchoService()));
  }

  /** The service with one inbound of each transport, as the flags say. */
  private static Serve fromFlags(
      String host,
      int httpPort,
      int grpcPort,
      int tchannelPort,
      TlsConfig tls,
      TlsMode mode,
      int adminPort) {
    HttpTransport http = HttpTransport.create();
    GrpcTransport grpc = GrpcTransport.create();
    TChannelTransport tchannel = TChannelTransport.of(SERVICE);
    HttpInbound.Builder httpBuilder = http.inboundBuilder().address(host, httpPort);
    GrpcInbound.Builder grpcBuilder = grpc.inboundBuilder(new InetSocketAddress(host, grpcPort));
    TChannelInbound.Builder tchannelBuilder =
        tchannel.inboundBuilder().host(host).port(tchannelPort);
    if (tls != null && mode != TlsMode.DISABLED) {
      httpBuilder.tls(tls, mode);
      grpcBuilder.tls(tls, mode);
      tchannelBuilder.tls(tls, mode);
    }
    Dispatcher.Builder builder =
        Dispatcher.builder(SERVICE)
            .inbound(httpBuilder.build(), grpcBuilder.build(), tchannelBuilder.build());
    PrometheusMeterRegistry registry = adminRegistry(adminPort);
    if (registry != null) {
      installMetrics(builder, registry);
    }
    return new Serve(builder, http, grpc, tchannel, host, adminPort, registry);
  }

  /** The registry the admin listener's {@code /metrics} exposes, with JVM meters; null without one. */
  private static PrometheusMeterRegistry adminRegistry(int adminPort) {
    if (adminPort == NO_ADMIN) {
      return null;
    }
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    new JvmMemoryMetrics().bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
    return registry;
  }

  private <T extends Inbound> T first(Class<T> type) {
    for (Inbound in : dispatcher.inbounds()) {
      if (type.isInstance(in)) {
        return type.cast(in);
      }
    }
    return null;
  }

  /**
   * Where the flags' dispatcher gets its call metrics: every call's metrics go to {@code registry}
   * ({@link YarpcMetrics}, yarpc-go's metric names and tags), which the admin listener's {@code /metrics}
   * exposes. A configuration file's dispatcher gets them from the file's {@code metrics} section instead
   * (see {@link #startFromConfig}).
   */
  private static void installMetrics(Dispatcher.Builder builder, PrometheusMeterRegistry registry) {
    YarpcMetrics.builder(registry).build().install(builder);
  }

  /**
   * Starts the service on {@code host} with these ports (0: any free port).
   *
   * @throws RuntimeException when a port cannot be bound; nothing is left running then
   */
  static Serve start(String host, int httpPort, int grpcPort, int tchannelPort) {
    return start(host, httpPort, grpcPort, tchannelPort, null, TlsMode.DISABLED);
  }

  /**
   * Starts the service with TLS on all three inbounds in {@code mode} ({@code tls} null: plaintext).
   *
   * @throws RuntimeException when a port cannot be bound or the certificate read; nothing is left running
   */
  static Serve start(
      String host, int httpPort, int grpcPort, int tchannelPort, TlsConfig tls, TlsMode mode) {
    return start(host, httpPort, grpcPort, tchannelPort, tls, mode, NO_ADMIN);
  }

  /**
   * Starts the service as {@link #start(String, int, int, int, TlsConfig, TlsMode)} does and, unless
   * {@code adminPort} is {@link #NO_ADMIN}, an admin listener on {@code host:adminPort} (0: any free
   * port; plain HTTP whatever the TLS settings) with a Prometheus registry for {@code /metrics}.
   *
   * @throws RuntimeException when a port cannot be bound or the certificate read; nothing is left running
   */
  static Serve start(
      String host,
      int httpPort,
      int grpcPort,
      int tchannelPort,
      TlsConfig tls,
      TlsMode mode,
      int adminPort) {
    return started(fromFlags(host, httpPort, grpcPort, tchannelPort, tls, mode, adminPort));
  }

  /**
   * Starts the service as the configuration file {@code file} describes, {@code ${VAR}} looked up with
   * {@code environment}, and unless {@code adminPort} is {@link #NO_ADMIN} an admin listener on {@code
   * 127.0.0.1:adminPort}. The file decides on call metrics and logs: its {@code metrics} section records
   * into the admin listener's registry (into Micrometer's global registry without one), its {@code
   * logging.levels} section logs every call on the logger {@code io.yarpc.calls}.
   *
   * @throws ConfigException listing what is wrong with the file
   * @throws RuntimeException when it cannot be read or a port cannot be bound; nothing is left running
   */
  static Serve startFromConfig(Path file, Function<String, String> environment, int adminPort) {
    PrometheusMeterRegistry registry = adminRegistry(adminPort);
    YarpcConfig.Loader loader = YarpcConfig.loader().environment(environment);
    if (registry != null) {
      loader.provide(MeterRegistry.class, registry);
    }
    Dispatcher.Builder builder;
    try {
      builder = loader.load(SERVICE, file);
    } catch (RuntimeException e) {
      if (registry != null) {
        registry.close();
      }
      throw e;
    }
    return started(new Serve(builder, null, null, null, "127.0.0.1", adminPort, registry));
  }

  private static Serve started(Serve serve) {
    try {
      if (serve.adminPort != NO_ADMIN) {
        // before the dispatcher: /health answers NOT_SERVING until it runs
        serve.admin =
            AdminServer.builder(serve.dispatcher)
                .host(serve.host)
                .port(serve.adminPort)
                .meterRegistry(serve.registry)
                .build()
                .start();
      }
      serve.dispatcher.start();
    } catch (RuntimeException e) {
      serve.close();
      throw e;
    }
    return serve;
  }

  /** The {@code serve} command's flags. */
  static final FlagSet FLAGS =
      new FlagSet(
              "serve",
              "[flags]",
              String.join(
                  "\n",
                  "Serves the "
                      + SERVICE
                      + " service (keyvalue, echo and the crossdock-style procedures)",
                  "over HTTP, gRPC and TChannel until interrupted (Ctrl-C, SIGTERM), and prints how to",
                  "call it. Calls in flight are drained when it stops."))
          .group(
              "inbounds",
              List.of(
                  new Flag("host", "ADDRESS", "127.0.0.1", "the address the inbounds listen on"),
                  new Flag(
                      "http-port", "PORT", "8080", "the HTTP inbound's port; 0: any free port"),
                  new Flag(
                      "grpc-port", "PORT", "8081", "the gRPC inbound's port; 0: any free port"),
                  new Flag(
                      "tchannel-port",
                      "PORT",
                      "8082",
                      "the TChannel inbound's port; 0: any free port"),
                  new Flag(
                      "config",
                      "FILE",
                      null,
                      "take the inbounds from a yarpc configuration file instead"
                          + " (examples/config/yarpc.yaml)")))
          .group(
              "admin",
              List.of(
                  new Flag(
                      "admin-port",
                      "PORT",
                      "none",
                      "an admin listener (plain HTTP): /debug/yarpc, /metrics, /health")))
          .group(TlsFlags.GROUP + " (all three inbounds; not with --config)", TlsFlags.SERVE);

  /** The {@code serve} command: parses the flags, starts, prints how to call it, and runs until stopped. */
  static Command command() {
    return new Command() {
      @Override
      public FlagSet flags() {
        return FLAGS;
      }

      @Override
      public int run(Flags flags, PrintStream out, PrintStream err) throws Exception {
        return runUntilStopped(flags, out, err);
      }
    };
  }

  private static int runUntilStopped(Flags flags, PrintStream out, PrintStream err)
      throws Flags.UsageException, InterruptedException {
    flags.noPositional();
    int adminPort = flags.has("admin-port") ? flags.port("admin-port", 0) : NO_ADMIN;
    Serve serve;
    try {
      if (flags.has("config")) {
        for (String flag : List.of("host", "http-port", "grpc-port", "tchannel-port")) {
          refuseWithConfig(flags, flag);
        }
        for (Flag flag : TlsFlags.SERVE) {
          refuseWithConfig(flags, flag.name());
        }
        serve = startFromConfig(Path.of(flags.get("config", null)), System::getenv, adminPort);
      } else {
        TlsMode mode = TlsFlags.mode(flags);
        TlsConfig tls = TlsFlags.server(flags);
        serve =
            start(
                flags.get("host", "127.0.0.1"),
                flags.port("http-port", 8080),
                flags.port("grpc-port", 8081),
                flags.port("tchannel-port", 8082),
                tls,
                mode,
                adminPort);
      }
    } catch (ConfigException e) {
      err.println("serve: " + e.getMessage());
      return 2;
    } catch (RuntimeException e) {
      err.println("serve: cannot start: " + e.getMessage());
      return 1;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  out.println("stopping " + SERVICE + " (draining calls in flight)...");
                  serve.close();
                  out.println("stopped");
                  out.flush();
                  stopped.countDown();
                },
                "yarpc-test-shutdown"));
    serve.printBanner(out);
    out.flush();
    stopped.await();
    return -1; // the JVM is exiting: Main must not call System.exit from here
  }

  private static void refuseWithConfig(Flags flags, String flag) throws Flags.UsageException {
    if (flags.has(flag)) {
      throw new Flags.UsageException(
          "--" + flag + " cannot be used with --config (the file declares the inbounds)");
    }
  }

  /** The HTTP inbound's address. */
  InetSocketAddress httpAddress() {
    return httpInbound.address();
  }

  /** The gRPC inbound's address. */
  InetSocketAddress grpcAddress() {
    return grpcInbound.address();
  }

  /** The TChannel inbound's address. */
  InetSocketAddress tchannelAddress() {
    return tchannelInbound.address();
  }

  /** The dispatcher. */
  Dispatcher dispatcher() {
    return dispatcher;
  }

  /** The admin listener, or null when started without an admin port. */
  AdminServer admin() {
    return admin;
  }

  /** The registry {@code /metrics} exposes, or null when started without an admin port. */
  PrometheusMeterRegistry registry() {
    return registry;
  }

  /** Prints the addresses, the procedures, a curl line and a {@code call} line. */
  void printBanner(PrintStream out) {
    if (httpInbound == null || grpcInbound == null || tchannelInbound == null) {
      printShortBanner(out);
      return;
    }
    String httpPeer = hostPort(httpAddress());
    boolean tls = tlsMode != TlsMode.DISABLED;
    String scheme = tls ? "https" : "http";
    String curlTls = tls ? " --cacert ca.pem" : "";
    out.println(
        SERVICE
            + " is serving"
            + (tls ? " with TLS " + tlsMode.name().toLowerCase(java.util.Locale.ROOT) : ""));
    out.printf(
        "  http      %-21s (%s)%n",
        httpPeer,
        tls
            ? "HTTP/1.1 and h2 over TLS"
                + (tlsMode == TlsMode.PERMISSIVE ? "; HTTP/1.1 and h2c" : "")
            : "HTTP/1.1 and h2c");
    out.printf("  grpc      %s%n", hostPort(grpcAddress()));
    out.printf("  tchannel  %s%n", hostPort(tchannelAddress()));
    out.println("procedures:");
    Map<String, Set<String>> encodings = new TreeMap<>();
    for (Procedure p : dispatcher.router().procedures()) {
      encodings
          .computeIfAbsent(p.name(), k -> new TreeSet<>())
          .add(p.encoding().isEmpty() ? "raw" : p.encoding());
    }
    encodings.forEach((name, e) -> out.printf("  %-45s %s%n", name, String.join(", ", e)));
    out.println("try:");
    out.println(
        "  curl -sS -D -"
            + curlTls
            + " "
            + scheme
            + "://"
            + httpPeer
            + "/ -H 'Rpc-Caller: curl' -H 'Rpc-Service: "
            + SERVICE
            + "' -H 'Rpc-Procedure: echo/raw' -H 'Rpc-Encoding: raw' -H 'Context-TTL-MS: 1000'"
            + " -H 'Rpc-Header-Greeting: hi' --data 'hello'");
    out.println(
        "  curl -sS"
            + curlTls
            + " "
            + scheme
            + "://"
            + httpPeer
            + "/ -H 'Rpc-Caller: curl' -H 'Rpc-Service: "
            + SERVICE
            + "' -H 'Rpc-Procedure: yarpc.examples.keyvalue.KeyValue::SetValue' -H 'Rpc-Encoding: json'"
            + " -H 'Context-TTL-MS: 1000' --data '{\"key\":\"greeting\",\"value\":\"hello\"}'");
    out.println(
        "  java -jar examples/target/yarpc-examples.jar call --peer "
            + hostPort(grpcAddress())
            + " --transport grpc --service "
            + SERVICE
            + " --procedure yarpc.examples.keyvalue.KeyValue::GetValue --encoding proto"
            + (tls ? " --tls-ca ca.pem" : "")
            + " '{\"key\":\"greeting\"}'");
    out.println("health (200 SERVING; 503 NOT_SERVING once stopping begins):");
    out.println("  curl -sS" + curlTls + " " + scheme + "://" + httpPeer + "/health");
    out.println(
        "  grpc.health.v1.Health and server reflection (v1, v1alpha) on "
            + hostPort(grpcAddress()));
    printAdmin(out);
    out.println("Ctrl-C stops it.");
  }

  private void printAdmin(PrintStream out) {
    AdminServer a = admin;
    if (a != null) {
      out.println("admin (plain HTTP on " + hostPort(a.address()) + "):");
      out.printf(
          "  %-45s the debug page: procedures, calls in flight, inbounds, peers%n",
          a.url("/debug/yarpc"));
      out.printf("  %-45s the same as JSON%n", a.url("/debug/yarpc.json"));
      out.printf("  %-45s Prometheus metrics%n", a.url("/metrics"));
      out.printf("  %-45s 200 SERVING; 503 NOT_SERVING once stopping begins%n", a.url("/health"));
    }
  }

  /** The banner of a service whose file lacks some inbound: its addresses and procedures. */
  private void printShortBanner(PrintStream out) {
    out.println(SERVICE + " is serving");
    peers().forEach((transport, peer) -> out.printf("  %-9s %s%n", transport, peer));
    out.println("procedures:");
    Set<String> names = new TreeSet<>();
    for (Procedure p : dispatcher.router().procedures()) {
      names.add(p.name());
    }
    names.forEach(name -> out.println("  " + name));
    printAdmin(out);
    out.println("Ctrl-C stops it.");
  }

  private static String hostPort(InetSocketAddress address) {
    String host = address.getAddress().getHostAddress();
    return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + address.getPort();
  }

  /**
   * Stops the dispatcher (draining calls in flight; the admin listener's {@code /health} says
   * NOT_SERVING meanwhile), the transports, then the admin listener; idempotent.
   */
  @Override
  public void close() {
    try {
      dispatcher.stop();
    } finally {
      // The dispatcher stops the transports it started; these cover a dispatcher that failed to
      // start. (A file's transports are only built, never started, until the dispatcher starts.)
      if (http != null) {
        tchannel.stop();
        grpc.stop();
        http.stop();
      }
      AdminServer a = admin;
      if (a != null) {
        a.stop();
      }
      if (registry != null) {
        registry.close();
      }
    }
  }

  /** The address of each inbound transport ({@code http}, {@code grpc}, {@code tchannel}), for logs and tests. */
  Map<String, String> peers() {
    Map<String, String> peers = new LinkedHashMap<>();
    if (httpInbound != null) {
      peers.put("http", hostPort(httpAddress()));
    }
    if (grpcInbound != null) {
      peers.put("grpc", hostPort(grpcAddress()));
    }
    if (tchannelInbound != null) {
      peers.put("tchannel", hostPort(tchannelAddress()));
    }
    return peers;
  }
}
