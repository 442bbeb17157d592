package io.yarpc.examples;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Entry point of {@code yarpc-examples.jar}:
 *
 * <ul>
 *   <li>{@code demo}: the keyvalue service over HTTP, gRPC and TChannel, driven by a client over each, with
 *       a table of what happened (see {@link Demo});
 *   <li>{@code serve}: the {@code yarpc-test} interop service until interrupted, with an admin listener
 *       when asked (see {@link Serve});
 *   <li>{@code call}: one call, yab style, or a benchmark of many (see {@link CallCommand}).
 * </ul>
 *
 * Every command answers {@code --help} with its flags and their defaults (see {@link Command}).
 *
 * <p>The example programs of {@code io.yarpc.examples.rawjson}, {@code .protobuf}, {@code .middleware} and
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
          "  demo    the keyvalue service over HTTP, gRPC and TChannel, with a client over each (the default)",
          "  serve   serves the yarpc-test service until interrupted",
          "  call    one call over any transport in any encoding, or a benchmark of many (yab style)",
          "",
          "java -jar yarpc-examples.jar <command> --help shows a command's flags and their defaults.",
          "",
          "example programs (java -cp yarpc-examples.jar <class>):",
          "  io.yarpc.examples.rawjson.RawJsonExample        a raw and a JSON procedure and their clients",
          "  io.yarpc.examples.protobuf.ProtobufExample      a grpc-java service and stubs over YARPC",
          "  io.yarpc.examples.middleware.MiddlewareExample  logging and header-based auth middleware",
          "  io.yarpc.examples.gateway.GatewayExample        a gateway whose downstream call inherits the deadline");

  private Main() {}

  /** The slf4j-simple property that sets the level of YARPC's line naming the Netty I/O. */
  static final String SERVE_IO_LOGGER =
      "org.slf4j.simpleLogger.log.io.yarpc.netty.internal.NettyIo";

  /** Runs the command named by the first argument ({@code demo} when there is none) and exits with its status. */
  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("serve")) {
      // serve says at start which Netty I/O its transports chose (epoll, or NIO and why). YARPC
      // logs it at INFO, above this example's default level (WARN), so let that one logger through,
      // before any logger exists.
      System.getProperties().putIfAbsent(SERVE_IO_LOGGER, "info");
    }
    int status = run(args, System.out, System.err);
    if (status >= 0) {
      System.exit(status);
    }
  }

  /** The commands by name. */
  static Map<String, Command> commands() {
    Map<String, Command> commands = new LinkedHashMap<>();
    commands.put("demo", Demo.command());
    commands.put("serve", Serve.command());
    commands.put("call", CallCommand.command());
    return commands;
  }

  /**
   * Runs one command; returns its exit status, or -1 for {@code serve}, which keeps running (its shutdown
   * hook stops it).
   */
  static int run(String[] args, PrintStream out, PrintStream err) throws Exception {
    String name = args.length == 0 ? "demo" : args[0];
    String[] rest = Arrays.copyOfRange(args, Math.min(1, args.length), args.length);
    Command command = commands().get(name);
    if (command != null) {
      return Command.execute(command, rest, out, err);
    }
    switch (name) {
      case "help":
      case "-h":
      case "--help":
        out.println(USAGE);
        return 0;
      default:
        err.println("unknown command \"" + name + "\"");
        err.println(USAGE);
        return 2;
    }
  }
}
