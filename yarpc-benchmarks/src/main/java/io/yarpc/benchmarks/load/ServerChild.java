package io.yarpc.benchmarks.load;

import io.yarpc.netty.internal.NettyIo;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One system's server in a child JVM ({@code load --processes separate}), seen from the harness: starts
 * {@link ServerProcess} with this JVM's java binary and class path, and this JVM's flags unless {@code
 * --server-jvm-opts} gives others; asks it for its {@link ProcessCounters} at the edges of a measured
 * window. {@link #close()} closes the child's stdin, on which it stops; a shutdown hook kills it if the
 * harness exits first, and if the harness is killed the child sees its stdin end and exits by itself.
 * Not thread-safe: the harness thread drives it.
 */
final class ServerChild implements AutoCloseable {
  private static final long REPLY_TIMEOUT_SECONDS = 60;
  private static final String EOF = "\u0000eof";

  private final Process process;
  private final List<String> command;
  private final Writer stdin;
  private final BlockingQueue<String> replies = new LinkedBlockingQueue<>();
  private final Thread killer;
  private final int port;

  private ServerChild(Process process, List<String> command) throws IOException {
    this.process = process;
    this.command = command;
    this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    this.killer = new Thread(process::destroyForcibly, LoadHarness.THREAD_PREFIX + "-kill-server");
    Runtime.getRuntime().addShutdownHook(killer);
    Thread reader = new Thread(this::readReplies, LoadHarness.THREAD_PREFIX + "-server-replies");
    reader.setDaemon(true);
    reader.start();
    String ready = reply();
    if (!ready.startsWith("ready ")) {
      close();
      throw new IOException("the server process did not start: " + ready);
    }
    this.port = Integer.parseInt(ready.substring("ready ".length()));
  }

  /**
   * Starts the server of {@code system} in a child JVM and waits until it listens.
   *
   * @param jvmOptions the child's JVM flags, or null for this JVM's own
   * @throws IOException when the child cannot start or reports that its server did not
   */
  static ServerChild start(
      String system, BenchTls tls, String observability, String io, List<String> jvmOptions)
      throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    if (jvmOptions != null) {
      command.addAll(jvmOptions);
    } else {
      for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
        if (!a.startsWith("-agentlib:jdwp") && !a.startsWith("-Xrunjdwp")) {
          command.add(a); // a debugger port cannot be shared
        }
      }
    }
    command.add("-D" + NettyIo.PROPERTY + "=" + io);
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(ServerProcess.class.getName());
    command.add("--system");
    command.add(system);
    command.add("--observability");
    command.add(observability);
    if (tls != null) {
      command.addAll(tls.arguments());
    }
    Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    return new ServerChild(p, command);
  }

  /** The port the server listens on, on {@code 127.0.0.1}. */
  int port() {
    return port;
  }

  /** The child's process id. */
  long pid() {
    return process.pid();
  }

  /** The command line that started the child. */
  List<String> command() {
    return command;
  }

  /** The child's counters now. */
  ProcessCounters counters() throws IOException {
    return ProcessCounters.parse(ask("counters"));
  }

  /** Runs a garbage collection in the child. */
  void gc() throws IOException {
    String reply = ask("gc");
    if (!reply.equals("ok")) {
      throw new IOException("the server process answered gc with " + reply);
    }
  }

  private String ask(String command) throws IOException {
    stdin.write(command + "\n");
    stdin.flush();
    return reply();
  }

  private String reply() throws IOException {
    String line;
    try {
      line = replies.poll(REPLY_TIMEOUT_SECONDS, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted waiting for the server process");
    }
    if (line == null) {
      throw new IOException("the server process did not answer in " + REPLY_TIMEOUT_SECONDS + " s");
    }
    if (line.equals(EOF)) {
      throw new IOException("the server process ended (see its stderr above)");
    }
    return line;
  }

  private void readReplies() {
    try (BufferedReader r =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = r.readLine()) != null; ) {
        replies.add(line);
      }
    } catch (IOException e) {
      // the process ended; EOF below says so
    }
    replies.add(EOF);
  }

  /** {@link #stop()}, for try-with-resources. */
  @Override
  public void close() {
    stop();
  }

  /**
   * Closes the child's stdin, on which it stops its server and exits, and waits for it; kills it if it has
   * not exited after 20 s.
   *
   * @return whether the child exited by itself
   */
  boolean stop() {
    boolean exited = false;
    try {
      stdin.close();
    } catch (IOException e) {
      // already gone
    }
    try {
      exited = process.waitFor(20, TimeUnit.SECONDS);
      if (!exited) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
    try {
      Runtime.getRuntime().removeShutdownHook(killer);
    } catch (IllegalStateException e) {
      // the JVM is shutting down: the hook runs anyway
    }
    return exited;
  }
}
