package io.yarpc.examples;

import java.io.PrintStream;
import java.util.Arrays;

/**
 * Entry point of {@code yarpc-examples.jar}:
 *
 * <ul>
 *   <li>{@code demo}: the keyvalue service over HTTP, gRPC and TChannel, driven by a client over each, with
 *       a table of what happened (see {@link Demo});
 *   <li>{@code serve --http-port P --grpc-port P --tchannel-port P [--admin-port P]} (or {@code serve
 *       --config FILE [--admin-port P]}): the {@code yarpc-test} interop service until interrupted, with
 *       an admin listener when asked (see {@link Serve});
 *   <li>{@code call --peer H:P --transport T --service S --procedure P --encoding E [--header k=v]...
 *       [--timeout 1s] BODY} (or {@code call --config FILE --outbound NAME ...}): one call, yab style
 *       (see {@link CallCommand}).
 * </ul>
 *
 * The example programs of {@code io.yarpc.examples.rawjson}, {@code .protobuf}, {@code .middleware} and
 * {@code .gateway} have their own {@code main}: {@code java -cp yarpc-examples.jar
 * io.yarpc.examples.rawjson.RawJsonExample}.
 */
public final class Main {
  static final String USAGE =
      String.join(
          "\n",
          "usage: java -jar yarpc-examples.jar <command> [flags]",
          "",
          "commands:",
          "  demo    the keyvalue service over HTTP, gRPC and TChannel, with a client over each",
          "  serve   --http-port 8080 --grpc-port 8081 --tchannel-port 8082 [--host 127.0.0.1]",
          "          [--admin-port 8083]",
          "          [--tls-cert FILE --tls-key FILE [--tls-ca FILE] [--tls-mode enforced]",
          "          [--tls-client-auth none|optional|require]]",
          "          serves the yarpc-test service until interrupted (port 0: any free port);",
          "          TLS applies to all three inbounds (--tls-mode disabled|permissive|enforced);",
          "          --admin-port adds an admin listener (plain HTTP): /debug/yarpc, /metrics, /health",
          "  serve   --config FILE [--admin-port P]",
          "          the same service with the inbounds of a yarpc configuration file",
          "          (examples/config/yarpc.yaml is one)",
          "  call    --peer 127.0.0.1:8080 --transport http|grpc|tchannel --service S --procedure P",
          "          --encoding raw|json|proto [--header k=v]... [--timeout 1s]",
          "          [--tls-ca FILE] [--tls-cert FILE --tls-key FILE] [--tls-server-name NAME] BODY",
          "          one call; prints the response body and headers, or the error (exit status 1)",
          "  call    --config FILE --outbound NAME --procedure P --encoding raw|json|proto",
          "          [--header k=v]... [--timeout 1s] BODY",
          "          the same call through the outbound NAME of a yarpc configuration file",
          "",
          "example programs (java -cp yarpc-examples.jar <class>):",
          "  io.yarpc.examples.rawjson.RawJsonExample        a raw and a JSON procedure and their clients",
          "  io.yarpc.examples.protobuf.ProtobufExample      a grpc-java service and stubs over YARPC",
          "  io.yarpc.examples.middleware.MiddlewareExample  logging and header-based auth middleware",
          "  io.yarpc.examples.gateway.GatewayExample        a gateway whose downstream call inherits the deadline");

  private Main() {}

  /** Runs the command named by the first argument ({@code demo} when there is none) and exits with its status. */
  public static void main(String[] args) throws Exception {
    int status = run(args, System.out, System.err);
    if (status >= 0) {
      System.exit(status);
    }
  }

  /**
   * Runs one command; returns its exit status, or -1 for {@code serve}, which keeps running (its shutdown
   * hook stops it).
   */
  static int run(String[] args, PrintStream out, PrintStream err) throws Exception {
    String command = args.length == 0 ? "demo" : args[0];
    String[] rest = Arrays.copyOfRange(args, Math.min(1, args.length), args.length);
    switch (command) {
      case "demo":
        return Demo.run(out).exitCode();
      case "serve":
        return Serve.runUntilStopped(rest, out, err);
      case "call":
        return CallCommand.run(rest, out, err);
      case "help":
      case "-h":
      case "--help":
        out.println(USAGE);
        return 0;
      default:
        err.println("unknown command \"" + command + "\"");
        err.println(USAGE);
        return 2;
    }
  }
}
