package io.yarpc.examples;

import io.yarpc.Dispatcher;
import io.yarpc.encoding.protobuf.ProtobufProcedures;
import io.yarpc.examples.echo.EchoService;
import io.yarpc.examples.keyvalue.KeyValueService;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.grpc.GrpcInbound;
import io.yarpc.transport.grpc.GrpcTransport;
import io.yarpc.transport.http.HttpInbound;
import io.yarpc.transport.http.HttpTransport;
import io.yarpc.transport.tchannel.TChannelInbound;
import io.yarpc.transport.tchannel.TChannelTransport;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;

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
 * and the gRPC inbound serves server reflection, all on by default.
 *
 * <p>{@link #runUntilStopped} prints the addresses and a curl line and runs until the JVM is asked to stop
 * (SIGINT, SIGTERM): a shutdown hook stops the dispatcher, which drains calls in flight. {@link #start}
 * starts one in-process (tests); {@link #close()} stops it.
 */
final class Serve implements AutoCloseable {
  /** The service name every client calls. */
  static final String SERVICE = "yarpc-test";

  private final Dispatcher dispatcher;
  private final HttpTransport http;
  private final GrpcTransport grpc;
  private final TChannelTransport tchannel;
  private final HttpInbound httpInbound;
  private final GrpcInbound grpcInbound;
  private final TChannelInbound tchannelInbound;

  private Serve(String host, int httpPort, int grpcPort, int tchannelPort) {
    http = HttpTransport.create();
    grpc = GrpcTransport.create();
    tchannel = TChannelTransport.of(SERVICE);
    httpInbound = http.inboundBuilder().address(host, httpPort).build();
    grpcInbound = grpc.inbound(new InetSocketAddress(host, grpcPort));
    tchannelInbound = tchannel.inboundBuilder().host(host).port(tchannelPort).build();
    dispatcher =
        Dispatcher.builder(SERVICE).inbound(httpInbound, grpcInbound, tchannelInbound).build();
    dispatcher.register(TestSubject.procedures());
    dispatcher.register(ProtobufProcedures.of(new KeyValueService()));
    dispatcher.register(ProtobufProcedures.of(new EchoService()));
  }

  /**
   * Starts the service on {@code host} with these ports (0: any free port).
   *
   * @throws RuntimeException when a port cannot be bound; nothing is left running then
   */
  static Serve start(String host, int httpPort, int grpcPort, int tchannelPort) {
    Serve serve = new Serve(host, httpPort, grpcPort, tchannelPort);
    try {
      serve.dispatcher.start();
    } catch (RuntimeException e) {
      serve.close();
      throw e;
    }
    return serve;
  }

  /** The {@code serve} command: parses the flags, starts, prints how to call it, and runs until stopped. */
  static int runUntilStopped(String[] args, PrintStream out, PrintStream err)
      throws InterruptedException {
    Serve serve;
    try {
      Flags flags = Flags.parse(args, Set.of("http-port", "grpc-port", "tchannel-port", "host"));
      if (!flags.positional().isEmpty()) {
        throw new Flags.UsageException("unexpected argument \"" + flags.positional().get(0) + "\"");
      }
      serve =
          start(
              flags.get("host", "127.0.0.1"),
              flags.port("http-port", 8080),
              flags.port("grpc-port", 8081),
              flags.port("tchannel-port", 8082));
    } catch (Flags.UsageException e) {
      err.println("serve: " + e.getMessage());
      err.println(Main.USAGE);
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

  /** Prints the addresses, the procedures, a curl line and a {@code call} line. */
  void printBanner(PrintStream out) {
    String httpPeer = hostPort(httpAddress());
    out.println(SERVICE + " is serving");
    out.printf("  http      %-21s (HTTP/1.1 and h2c)%n", httpPeer);
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
        "  curl -sS -D - http://"
            + httpPeer
            + "/ -H 'Rpc-Caller: curl' -H 'Rpc-Service: "
            + SERVICE
            + "' -H 'Rpc-Procedure: echo/raw' -H 'Rpc-Encoding: raw' -H 'Context-TTL-MS: 1000'"
            + " -H 'Rpc-Header-Greeting: hi' --data 'hello'");
    out.println(
        "  curl -sS http://"
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
            + " --procedure yarpc.examples.keyvalue.KeyValue::GetValue --encoding proto '{\"key\":\"greeting\"}'");
    out.println("health (200 SERVING; 503 NOT_SERVING once stopping begins):");
    out.println("  curl -sS http://" + httpPeer + "/health");
    out.println(
        "  grpc.health.v1.Health and server reflection (v1, v1alpha) on "
            + hostPort(grpcAddress()));
    out.println("Ctrl-C stops it.");
  }

  private static String hostPort(InetSocketAddress address) {
    String host = address.getAddress().getHostAddress();
    return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + address.getPort();
  }

  /** Stops the dispatcher (draining calls in flight) and the transports; idempotent. */
  @Override
  public void close() {
    try {
      dispatcher.stop();
    } finally {
      // The dispatcher stops the transports it started; these cover a dispatcher that failed to
      // start.
      tchannel.stop();
      grpc.stop();
      http.stop();
    }
  }

  /** A line per transport, for logs and tests. */
  Map<String, String> peers() {
    return Map.of(
        "http",
        hostPort(httpAddress()),
        "grpc",
        hostPort(grpcAddress()),
        "tchannel",
        hostPort(tchannelAddress()));
  }
}
