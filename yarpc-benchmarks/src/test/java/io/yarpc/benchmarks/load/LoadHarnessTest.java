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
        List.of(EchoSystem.GRPC_JAVA, EchoSystem.YARPC_GRPC, EchoSystem.YARPC_GRPC_DIRECT);
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
