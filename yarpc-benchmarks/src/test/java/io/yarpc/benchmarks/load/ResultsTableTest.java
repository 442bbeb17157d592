package io.yarpc.benchmarks.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The {@code report} subcommand renders a results file (a fixed fixture) as the README's tables. */
class ResultsTableTest {
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int report(String... args) {
    return ResultsTable.main(
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8),
        args);
  }

  private static Path fixture() throws URISyntaxException {
    return Path.of(ResultsTableTest.class.getResource("report-fixture.json").toURI());
  }

  private String stdout() {
    return out.toString(StandardCharsets.UTF_8);
  }

  @Test
  void rendersTheMarkdownRowsWithRatiosToGrpcJavaAtTheSameSizeAndInFlightCount() throws Exception {
    assertThat(report("--json", fixture().toString(), "--markdown")).isZero();
    List<String> lines = Arrays.asList(stdout().split("\n"));

    assertThat(lines.get(0))
        .isEqualTo(
            "2026-12-02T01:00:00Z – 2026-12-02T01:09:00Z; 2 CPUs, 23.0 GB RAM, Linux 6.1.0 amd64, "
                + "OpenJDK 64-Bit Server VM 17.0.15+6-Debian-1deb12u1 (max heap 6.30 GB); "
                + "load average 0.50 → 2.25; processes separate; io NIO; tls none; "
                + "`java -jar yarpc-benchmarks/target/yarpc-benchmarks.jar load --processes separate`");
    assertThat(lines)
        .contains(
            "| system | size | in flight | calls/s | × | p50 µs | p90 µs | p99 µs | server CPU µs/call | × "
                + "| server B/call | × | client CPU µs/call | × | client B/call | × |",
            "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
            // the baseline's own ratios are 1
            "| grpc-java | 350 B | 64 | 20,000 | 1 | 3,000 | 4,000 | 5,000 | 40.0 | 1 | 6.60 KB | 1 "
                + "| 50.0 | 1 | 8.80 KB | 1 |",
            // 25,000 / 20,000 calls/s; 30 / 40 µs server CPU; 3,300 / 6,600 B; 45 / 50 µs; 9,680 /
            // 8,800 B
            "| yarpc-http | 350 B | 64 | 25,000 | 1.25 | 2,500 | 3,500 | 4,500 | 30.0 | 0.75 | 3.30 KB "
                + "| 0.50 | 45.0 | 0.90 | 9.68 KB | 1.10 |",
            // no grpc-java cell at 1 MiB × 1: no ratios; a failed cell says why
            "| yarpc-tchannel | 1 MiB | 1 | failed: did not start: boom |" + "  |".repeat(12),
            "| gRPC stream | size | window | messages/s | × | p50 µs | p90 µs | p99 µs | server CPU µs/msg "
                + "| × | server B/msg | × | client CPU µs/msg | × | client B/msg | × |",
            "| yarpc-grpc | 350 B | 16 | 13,200 | 1.10 | 1,200 | 1,500 | 2,000 | 36.0 | 0.80 | 2.72 KB "
                + "| 1.20 | 48.0 | 1.00 | 2.30 KB | 1.00 |");
    assertThat(stdout())
        .contains(
            "Warm-up did not settle (calls/s of 3 consecutive 1 s windows within 5 %) in: "
                + "yarpc-http unary 350 B × 64.");
  }

  @Test
  void plainTextAlignsTheSameFigures() throws Exception {
    assertThat(report("--json", fixture().toString())).isZero();
    List<String> lines = Arrays.asList(stdout().split("\n"));
    String head = lines.stream().filter(l -> l.startsWith("system ")).findFirst().orElseThrow();
    String http = lines.stream().filter(l -> l.startsWith("yarpc-http ")).findFirst().orElseThrow();
    String grpc = lines.stream().filter(l -> l.startsWith("grpc-java ")).findFirst().orElseThrow();
    assertThat(http.split("\\s{2,}"))
        .containsExactly(
            "yarpc-http",
            "350 B",
            "64",
            "25,000",
            "1.25",
            "2,500",
            "3,500",
            "4,500",
            "30.0",
            "0.75",
            "3.30 KB",
            "0.50",
            "45.0",
            "0.90",
            "9.68 KB",
            "1.10");
    // right-aligned: every row ends where the header ends
    assertThat(http).hasSameSizeAs(head);
    assertThat(grpc).hasSameSizeAs(head);
    assertThat(stdout()).doesNotContain("| ");
  }

  @Test
  void badArgumentsAndUnreadableFilesGetAClearMessage(@TempDir Path dir) throws Exception {
    assertThat(report()).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("--json is missing");

    err.reset();
    assertThat(report("--json", "x.json", "--html")).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("unknown option --html");

    err.reset();
    Path missing = dir.resolve("missing.json");
    assertThat(report("--json", missing.toString())).isEqualTo(1);
    assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("cannot read " + missing);

    err.reset();
    Path other = Files.writeString(dir.resolve("other.json"), "{\"rows\": []}");
    assertThat(report("--json", other.toString())).isEqualTo(1);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("is not a load harness results file (no environment or unary rows)");

    err.reset();
    Path broken = Files.writeString(dir.resolve("broken.json"), "{\"environment\": ");
    assertThat(report("--json", broken.toString())).isEqualTo(1);
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("is not JSON");
  }

  @Test
  void aHarnessResultsFileReadsBackToTheSameTables(@TempDir Path dir) throws Exception {
    LoadReport original = LoadReport.read(fixture());
    Path copy = dir.resolve("copy.json");
    original.writeJson(copy);
    LoadReport again = LoadReport.read(copy);
    assertThat(again.cells()).isEqualTo(original.cells());
    assertThat(again.toMarkdown()).isEqualTo(original.toMarkdown());
  }
}
