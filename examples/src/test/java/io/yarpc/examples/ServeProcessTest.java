package io.yarpc.examples;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.epoll.Epoll;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Runs {@code serve} as a newcomer would — its own JVM — calls it over every transport, then sends it
 * SIGTERM: the shutdown hook must stop it cleanly.
 */
@Timeout(120)
class ServeProcessTest {
  @Test
  void servesUntilSigtermThenStopsCleanly() throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process process =
        new ProcessBuilder(
                java,
                "-cp",
                System.getProperty("java.class.path"),
                Main.class.getName(),
                "serve",
                "--http-port",
                "0",
                "--grpc-port",
                "0",
                "--tchannel-port",
                "0")
            .redirectErrorStream(true)
            .start();
    try {
      BufferedReader reader =
          new BufferedReader(
              new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
      List<String> lines = new ArrayList<>();
      Map<String, String> peers = new HashMap<>();
      for (String line = reader.readLine(); line != null; line = reader.readLine()) {
        lines.add(line);
        String[] words = line.trim().split("\\s+");
        if (words.length >= 2 && List.of("http", "grpc", "tchannel").contains(words[0])) {
          peers.put(words[0], words[1]);
        }
        if (line.startsWith("Ctrl-C")) {
          break;
        }
      }
      assertThat(peers).as(String.join("\n", lines)).containsOnlyKeys("http", "grpc", "tchannel");
      // before its banner, the Netty I/O its transports chose (YARPC's INFO line)
      assertThat(lines.get(0))
          .startsWith(
              "[main] INFO io.yarpc.netty.internal.NettyIo - yarpc transports use "
                  + (Epoll.isAvailable()
                      ? "epoll I/O (yarpc.io=auto)"
                      : "nio I/O (epoll is not available: "));
      assertThat(lines).anySatisfy(l -> assertThat(l).contains("curl -sS"));

      for (Map.Entry<String, String> peer : peers.entrySet()) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status =
            CallCommand.run(
                new String[] {
                  "--peer",
                  peer.getValue(),
                  "--transport",
                  peer.getKey(),
                  "--service",
                  "yarpc-test",
                  "--procedure",
                  "echo/raw",
                  "--encoding",
                  "raw",
                  "--timeout",
                  "10s",
                  "hi " + peer.getKey()
                },
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(status).as(err.toString(StandardCharsets.UTF_8)).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("\"hi " + peer.getKey() + "\"");
      }

      CompletableFuture<List<String>> rest =
          CompletableFuture.supplyAsync(() -> reader.lines().toList());
      process
          .toHandle()
          .destroy(); // SIGTERM (Process.destroy would also close our end of its output)
      assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("serve exits after SIGTERM").isTrue();
      assertThat(rest.get(10, TimeUnit.SECONDS))
          .as("what serve printed while stopping")
          .contains("stopped")
          .noneSatisfy(l -> assertThat(l).containsAnyOf("Exception", "LEAK"));
      assertThat(process.exitValue()).isEqualTo(128 + 15); // the JVM's status after SIGTERM
    } finally {
      process.destroyForcibly();
    }
  }
}
