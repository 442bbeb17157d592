package io.yarpc.benchmarks.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs the load harness for a fraction of a second per cell and checks only that it completed and that
 * its results are well formed. Nothing here measures or asserts anything about time or speed: the
 * harness is run for real with {@code java -jar yarpc-benchmarks.jar load}.
 */
class LoadHarnessTest {
  @Test
  void everySystemCompletesCallsAndTheResultsAreWellFormed(@TempDir Path dir) throws Exception {
    Path json = dir.resolve("load-results.json");
    LoadOptions options =
        LoadOptions.parse(
            "--duration",
            "200ms",
            "--warmup",
            "100ms",
            "--warmup-max",
            "200ms",
            "--prewarm",
            "0",
            "--sizes",
            "350",
            "--inflight",
            "1",
            "--stream-sizes",
            "350",
            "--json",
            json.toString(),
            "--quiet");

    LoadReport report = LoadHarness.run(options);
    report.writeJson(json);

    List<String> streaming =
        List.of(
            EchoSystem.GRPC_JAVA,
            EchoSystem.YARPC_GRPC,
            EchoSystem.YARPC_GRPC_DIRECT,
            EchoSystem.YARPC_GRPC_OBSERVED);
    assertThat(report.cells()).hasSize(LoadOptions.ALL_SYSTEMS.size() + streaming.size());
    for (CellResult c : report.cells()) {
      assertThat(c.ok())
          .as("%s %s completed calls (error: %s)", c.system(), c.mode(), c.error())
          .isTrue();
      assertThat(c.callsPerSecond()).isPositive();
      assertThat(c.p50Micros()).isPositive();
      assertThat(c.p99Micros()).isGreaterThanOrEqualTo(c.p50Micros());
      assertThat(c.serverBytesPerCall()).isPositive();
      assertThat(c.clientBytesPerCall()).isPositive();
      assertThat(c.cpuMicrosPerCall()).isNotNegative();
      assertThat(c.warmupSeconds()).isGreaterThanOrEqualTo(0.1);
    }

    JsonObject root = JsonParser.parseString(Files.readString(json)).getAsJsonObject();
    assertThat(root.getAsJsonObject("environment").get("processors").getAsInt()).isPositive();
    JsonArray unary = root.getAsJsonArray("unary");
    assertThat(unary).hasSize(LoadOptions.ALL_SYSTEMS.size());
    for (JsonElement e : unary) {
      JsonObject row = e.getAsJsonObject();
      assertThat(LoadOptions.ALL_SYSTEMS).contains(row.get("system").getAsString());
      assertThat(row.get("size").getAsInt()).isEqualTo(350);
      assertThat(row.get("inflight").getAsInt()).isEqualTo(1);
      assertThat(row.get("callsPerSecond").getAsDouble()).isPositive();
      assertThat(row.getAsJsonObject("latencyMicros").get("p99").getAsDouble()).isPositive();
      assertThat(row.get("serverBytesPerCall").getAsLong()).isPositive();
      assertThat(row.get("clientBytesPerCall").getAsLong()).isPositive();
      JsonObject ratio = row.getAsJsonObject("ratioToGrpcJava");
      assertThat(ratio.get("callsPerSecond").getAsDouble()).isPositive();
      assertThat(ratio.get("serverBytesPerCall").getAsDouble()).isPositive();
    }
    JsonArray stream = root.getAsJsonArray("stream");
    assertThat(stream).hasSize(streaming.size());
    for (JsonElement e : stream) {
      assertThat(e.getAsJsonObject().get("window").getAsInt()).isEqualTo(16);
      assertThat(e.getAsJsonObject().get("callsPerSecond").getAsDouble()).isPositive();
    }

    String markdown = report.toMarkdown();
    for (String system : LoadOptions.ALL_SYSTEMS) {
      assertThat(markdown).contains("| " + system + " | 350 B | 1 |");
    }
    assertThat(markdown).contains("| gRPC stream |");
  }

  @Test
  void separateProcessesServeFromAChildJvmThatExitsWithTheRun(@TempDir Path dir) throws Exception {
    LoadOptions options =
        LoadOptions.parse(
            "--processes",
            "separate",
            "--systems",
            "grpc-java,yarpc-http",
            "--duration",
            "200ms",
            "--warmup",
            "100ms",
            "--warmup-max",
            "200ms",
            "--prewarm",
            "100ms",
            "--sizes",
            "350",
            "--inflight",
            "1",
            "--stream-sizes",
            "350",
            "--json",
            dir.resolve("load-results.json").toString(),
            "--quiet");
    assertThat(ProcessHandle.current().children()).isEmpty();

    LoadReport report = LoadHarness.run(options);

    assertThat(report.cells())
        .extracting(c -> c.system() + " " + c.mode())
        .containsExactly("grpc-java unary", "grpc-java stream", "yarpc-http unary");
    for (CellResult c : report.cells()) {
      assertThat(c.ok()).as("%s %s (error: %s)", c.system(), c.mode(), c.error()).isTrue();
      // the whole server process's figures: it allocated and used CPU serving the calls
      assertThat(c.serverBytesPerCall()).isPositive();
      assertThat(c.serverCpuMicrosPerCall()).isPositive();
      assertThat(c.clientBytesPerCall()).isPositive();
      // the total is both processes'
      assertThat(c.cpuMicrosPerCall()).isGreaterThanOrEqualTo(c.serverCpuMicrosPerCall());
      assertThat(c.threads().keySet()).anyMatch(t -> t.startsWith("server process "));
      // nothing in this JVM served
      c.threads()
          .forEach(
              (thread, how) -> {
                if (!thread.startsWith("server process ")) {
                  assertThat(how).as(thread).doesNotStartWith("server");
                }
              });
    }
    assertThat(report.environment()).containsEntry("processes", "separate");
    @SuppressWarnings("unchecked")
    List<String> command = (List<String>) report.environment().get("serverCommand");
    assertThat(command).contains(ServerProcess.class.getName(), "-Dyarpc.io=" + options.io);
    assertThat(command.get(0)).endsWith("java");
    // every server JVM is gone when the run returns
    assertThat(ProcessHandle.current().children()).isEmpty();
  }

  @Test
  void theServerProcessStopsWhenItsStdinEnds() throws Exception {
    ServerChild child = ServerChild.start(EchoSystem.NETTY_HTTP, null, "none", "nio", List.of());
    ProcessHandle process = ProcessHandle.of(child.pid()).orElseThrow();
    boolean exitedByItself;
    try {
      assertThat(child.port()).isPositive();
      ProcessCounters before = child.counters();
      child.gc();
      ProcessCounters after = child.counters();
      assertThat(after.gcCount()).isGreaterThan(before.gcCount());
      assertThat(after.cpuNanos()).isGreaterThanOrEqualTo(before.cpuNanos());
    } finally {
      exitedByItself = child.stop(); // closes its stdin, as the harness's death would
    }
    assertThat(exitedByItself).as("the child exited when its stdin closed, unkilled").isTrue();
    assertThat(process.isAlive()).isFalse();
  }

  @Test
  void aServerProcessThatCannotStartSaysWhy() {
    assertThatThrownBy(() -> ServerChild.start("corba", null, "none", "nio", List.of()))
        .isInstanceOf(java.io.IOException.class)
        .hasMessageContaining("the server process did not start: failed")
        .hasMessageContaining("unknown system corba");
    assertThat(ProcessHandle.current().children()).isEmpty();
  }

  @Test
  void countersLinesRoundTripAndABadOneIsRefused() {
    ProcessCounters c = new ProcessCounters(12, 34, 5, 6);
    assertThat(ProcessCounters.parse(c.toLine())).isEqualTo(c);
    assertThat(c.minus(new ProcessCounters(2, 40, 1, 1)))
        .isEqualTo(new ProcessCounters(10, 0, 4, 5));
    assertThatThrownBy(() -> ProcessCounters.parse("counters 1 2"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("not a counters line: counters 1 2");
    assertThatThrownBy(() -> ProcessCounters.parse("counters 1 2 x 4"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("not a counters line: counters 1 2 x 4");
  }

  @Test
  void parsesTheCommandLine() {
    LoadOptions o =
        LoadOptions.parse(
            "--duration",
            "10s",
            "--sizes",
            "350,10240,1048576",
            "--inflight=1,64",
            "--systems",
            "grpc-java,yarpc-tchannel",
            "--stream-sizes",
            "none",
            "--warmup",
            "250ms");
    assertThat(o.duration).isEqualTo(Duration.ofSeconds(10));
    assertThat(o.warmup).isEqualTo(Duration.ofMillis(250));
    assertThat(o.sizes).containsExactly(350, 10240, 1048576);
    assertThat(o.inflight).containsExactly(1, 64);
    assertThat(o.systems).containsExactly("grpc-java", "yarpc-tchannel");
    assertThat(o.streamSizes).isEmpty();

    LoadOptions quick = LoadOptions.parse("--quick");
    assertThat(quick.duration).isEqualTo(Duration.ofSeconds(1));
    assertThat(quick.warmup).isEqualTo(Duration.ofMillis(500));

    assertThatThrownBy(() -> LoadOptions.parse("--sizes", "big"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> LoadOptions.parse("--systems", "corba"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> LoadOptions.parse("--frobnicate"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void parsesTheProcessAndWarmUpOptions() {
    LoadOptions defaults = LoadOptions.parse();
    assertThat(defaults.processes).isEqualTo("shared");
    assertThat(defaults.separate()).isFalse();
    assertThat(defaults.serverJvmOpts).isNull();
    assertThat(defaults.warmupMax).isEqualTo(Duration.ofSeconds(30));

    LoadOptions o =
        LoadOptions.parse(
            "--processes",
            "separate",
            "--server-jvm-opts",
            " -Xmx1g  -XX:+UseParallelGC ",
            "--warmup-max",
            "10s");
    assertThat(o.separate()).isTrue();
    assertThat(o.serverJvmOpts).containsExactly("-Xmx1g", "-XX:+UseParallelGC");
    assertThat(o.warmupMax).isEqualTo(Duration.ofSeconds(10));

    assertThatThrownBy(() -> LoadOptions.parse("--processes", "forked"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("--processes must be shared or separate: forked");
    assertThatThrownBy(() -> LoadOptions.parse("--server-jvm-opts", "-Xmx1g"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("--server-jvm-opts needs --processes separate");
    assertThatThrownBy(() -> LoadOptions.parse("--warmup-max", "soon"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("not a duration: soon");
  }

  @Test
  void theBareNettyRowsHaveNoTlsAndTheIoIsOneOfNettys() {
    assertThat(LoadOptions.parse("--tls", "jdk").systems)
        .isNotEmpty()
        .doesNotContain(EchoSystem.NETTY_HTTP, EchoSystem.NETTY_H2C);
    assertThat(LoadOptions.parse("--io", "epoll").io).isEqualTo("epoll");
    assertThatThrownBy(() -> LoadOptions.parse("--io", "kqueue"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("must be auto, epoll, io_uring or nio");
  }
}
