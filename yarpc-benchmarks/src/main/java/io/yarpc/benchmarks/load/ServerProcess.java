package io.yarpc.benchmarks.load;

import io.yarpc.tls.TlsProvider;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The server half of {@code load --processes separate}: the child JVM {@link ServerChild} starts for one
 * system. It starts the system's server ({@link EchoSystem#startServer()}, on {@code 127.0.0.1}) and then
 * talks with the harness over its standard streams, one line each way:
 *
 * <ul>
 *   <li>first, on stdout: {@code ready PORT}, or {@code failed REASON} (and it exits with status 1);
 *   <li>{@code counters} on stdin: answers its {@link ProcessCounters} line;
 *   <li>{@code gc} on stdin: runs {@link System#gc()}, answers {@code ok};
 *   <li>end of stdin — the harness closed it, or died: stops the server and exits (within 15 s, forcibly
 *       if stopping hangs), so no server outlives its harness.
 * </ul>
 *
 * Everything else it prints (logs, {@link System#out} included) goes to stderr.
 *
 * <pre>
 * java [flags] -cp CLASSPATH io.yarpc.benchmarks.load.ServerProcess --system NAME
 *     [--observability O] [--tls jdk|openssl --tls-ca PEM --tls-cert PEM --tls-key PEM]
 * </pre>
 *
 * The Netty I/O comes from the system property {@code yarpc.io}, as in the harness.
 */
public final class ServerProcess {
  private static final long EXIT_GRACE_MILLIS = 15_000;

  private ServerProcess() {}

  /** Runs the server until stdin ends; see the class comment. */
  public static void main(String[] args) throws Exception {
    PrintStream control = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    System.setOut(System.err);
    EchoSystem system;
    int port;
    try {
      system = create(args);
      port = system.startServer();
    } catch (Throwable e) {
      control.println("failed " + e.toString().replace('\n', ' '));
      System.exit(1);
      return;
    }
    control.println("ready " + port);
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      switch (line) {
        case "counters":
          control.println(ProcessCounters.now().toLine());
          break;
        case "gc":
          System.gc();
          control.println("ok");
          break;
        default:
          control.println("failed unknown command " + line);
      }
    }
    Thread halt =
        new Thread(
            () -> {
              try {
                Thread.sleep(EXIT_GRACE_MILLIS);
              } catch (InterruptedException e) {
                return;
              }
              Runtime.getRuntime().halt(2);
            },
            "bench-harness-exit");
    halt.setDaemon(true);
    halt.start();
    system.close();
    System.exit(0);
  }

  /** The system the arguments name, not yet started. */
  static EchoSystem create(String... args) {
    Map<String, String> o = new HashMap<>();
    for (int i = 0; i < args.length; i++) {
      if (!args[i].startsWith("--") || i + 1 >= args.length) {
        throw new IllegalArgumentException("expected --option value, got " + args[i]);
      }
      o.put(args[i], args[++i]);
    }
    String name = o.get("--system");
    if (name == null) {
      throw new IllegalArgumentException("--system is missing");
    }
    BenchTls tls = null;
    String provider = o.getOrDefault("--tls", "none");
    if (!provider.equals("none")) {
      tls =
          BenchTls.of(
              TlsProvider.valueOf(provider.toUpperCase(Locale.ROOT)),
              Path.of(o.get("--tls-ca")),
              Path.of(o.get("--tls-cert")),
              Path.of(o.get("--tls-key")));
    }
    return EchoSystem.create(name, tls, o.getOrDefault("--observability", "none"));
  }
}
