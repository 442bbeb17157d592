package io.yarpc.transport.tchannel;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A tchannel-node 4.0.1 peer running as a {@code node} subprocess on loopback: {@code server.js} (a
 * tchannel-node server) or {@code client.js} (a tchannel-node client driven by JSON lines), from {@code
 * src/test/node}. The process is started, its {@code READY} line awaited, and it is killed on {@link
 * #close()}. Tests that need it are skipped when {@code node_modules} is missing (CI runs {@code npm ci
 * --prefix yarpc-transport-tchannel/src/test/node} first).
 */
final class NodePeer implements AutoCloseable {
  private static final long READY_TIMEOUT_SECONDS = 30;

  private final Process process;
  private final OutputStream stdin;
  private final CompletableFuture<String> ready = new CompletableFuture<>();
  private final Map<Integer, CompletableFuture<JsonObject>> pending = new ConcurrentHashMap<>();
  private final AtomicInteger nextId = new AtomicInteger();
  private final List<String> unexpected = new ArrayList<>();

  private NodePeer(Process process) {
    this.process = process;
    this.stdin = process.getOutputStream();
    Thread reader = new Thread(this::readStdout, "node-peer-stdout");
    reader.setDaemon(true);
    reader.start();
  }

  /** The directory of the Node project. */
  static Path nodeDir() {
    String base = System.getProperty("basedir");
    Path module = base != null ? Path.of(base) : Path.of("").toAbsolutePath();
    return module.resolve("src/test/node");
  }

  /** Whether tchannel-node is installed under {@code src/test/node/node_modules}. */
  static boolean isInstalled() {
    return Files.isDirectory(nodeDir().resolve("node_modules/tchannel"));
  }

  /** Skips the calling test unless tchannel-node is installed. */
  static void assumeInstalled() {
    assumeTrue(
        isInstalled(),
        "tchannel-node is not installed (no "
            + nodeDir().resolve("node_modules")
            + "): run `npm ci --prefix yarpc-transport-tchannel/src/test/node` to enable the interop tests");
  }

  /** Starts {@code node script args...} and waits for its READY line. */
  static NodePeer start(String script, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of("node", script));
    command.addAll(List.of(args));
    Process p =
        new ProcessBuilder(command)
            .directory(nodeDir().toFile())
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    NodePeer peer = new NodePeer(p);
    try {
      peer.ready.get(READY_TIMEOUT_SECONDS, TimeUnit.SECONDS);
    } catch (Exception e) {
      peer.close();
      throw new IllegalStateException("node " + script + " did not become ready", e);
    }
    return peer;
  }

  /** The READY line's argument (the server's host:port), or empty. */
  String readyArgument() {
    return ready.join();
  }

  /** client.js: sends one request; the future completes with its answer line. */
  CompletableFuture<JsonObject> send(JsonObject command) {
    int id = nextId.incrementAndGet();
    command.addProperty("id", id);
    CompletableFuture<JsonObject> answer = new CompletableFuture<>();
    pending.put(id, answer);
    try {
      synchronized (stdin) {
        stdin.write((command + "\n").getBytes(UTF_8));
        stdin.flush();
      }
    } catch (IOException e) {
      pending.remove(id);
      answer.completeExceptionally(e);
    }
    return answer;
  }

  private void readStdout() {
    try (BufferedReader in =
        new BufferedReader(new InputStreamReader(process.getInputStream(), UTF_8))) {
      for (String line; (line = in.readLine()) != null; ) {
        if (line.startsWith("READY")) {
          ready.complete(line.length() > 6 ? line.substring(6).trim() : "");
          continue;
        }
        try {
          JsonObject o = JsonParser.parseString(line).getAsJsonObject();
          CompletableFuture<JsonObject> f = pending.remove(o.get("id").getAsInt());
          if (f != null) {
            f.complete(o);
            continue;
          }
        } catch (RuntimeException ignored) {
          // not an answer line
        }
        synchronized (unexpected) {
          unexpected.add(line);
        }
      }
    } catch (IOException ignored) {
      // the process went away
    } finally {
      IllegalStateException gone =
          new IllegalStateException("the node process ended; unexpected output: " + unexpected);
      ready.completeExceptionally(gone);
      pending.values().forEach(f -> f.completeExceptionally(gone));
    }
  }

  @Override
  public void close() {
    try {
      stdin.close();
    } catch (IOException ignored) {
      // already gone
    }
    try {
      if (!process.waitFor(5, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }
}
