package io.yarpc.examples;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonParser;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code serve --config} and {@code call --config} with the sample file {@code
 * examples/config/yarpc.yaml}: its ports come from variables, given free ones here; the service serves
 * on the file's three inbounds and {@code call} goes through each of the file's outbounds.
 */
@Timeout(120)
class ConfigServeAndCallTest {
  static final Path SAMPLE = Path.of("config/yarpc.yaml");
  private static Map<String, String> env;
  private static Serve serve;

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  @BeforeAll
  static void startFromTheSample() throws IOException {
    env =
        Map.of(
            "HTTP_PORT", String.valueOf(freePort()),
            "GRPC_PORT", String.valueOf(freePort()),
            "TCHANNEL_PORT", String.valueOf(freePort()));
    serve = Serve.startFromConfig(SAMPLE, env::get, Serve.NO_ADMIN);
  }

  @AfterAll
  static void stop() {
    if (serve != null) {
      serve.close();
    }
  }

  record Run(int status, String out, String err) {}

  private static Run call(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status =
        CallCommand.run(
            args,
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8),
            env::get);
    return new Run(
        status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  @Test
  void serveTakesTheInboundsFromTheFile() {
    assertThat(serve.peers())
        .containsExactly(
            Map.entry("http", "127.0.0.1:" + env.get("HTTP_PORT")),
            Map.entry("grpc", "127.0.0.1:" + env.get("GRPC_PORT")),
            Map.entry("tchannel", "127.0.0.1:" + env.get("TCHANNEL_PORT")));
    ByteArrayOutputStream banner = new ByteArrayOutputStream();
    serve.printBanner(new PrintStream(banner, true, StandardCharsets.UTF_8));
    assertThat(banner.toString(StandardCharsets.UTF_8))
        .contains("yarpc-test is serving", "127.0.0.1:" + env.get("GRPC_PORT"));
  }

  @ParameterizedTest
  @ValueSource(strings = {"over-http", "over-grpc", "over-tchannel"})
  void callGoesThroughTheNamedOutbound(String outbound) {
    Run run =
        call(
            "--config",
            SAMPLE.toString(),
            "--outbound",
            outbound,
            "--procedure",
            "yarpc.examples.keyvalue.KeyValue::SetValue",
            "--encoding",
            "proto",
            "--timeout",
            "10s",
            "{\"key\":\"k-" + outbound + "\",\"value\":\"v\"}");
    assertThat(run.status()).as(run.err()).isZero();
    Run get =
        call(
            "--config",
            SAMPLE.toString(),
            "--outbound",
            outbound,
            "--procedure",
            "echo/raw",
            "--encoding",
            "raw",
            "--header",
            "x-from=" + outbound,
            "--timeout",
            "10s",
            "hello");
    assertThat(get.status()).as(get.err()).isZero();
    var json = JsonParser.parseString(get.out()).getAsJsonObject();
    assertThat(json.get("body").getAsString()).isEqualTo("hello");
    assertThat(json.getAsJsonObject("headers").get("x-from").getAsString()).isEqualTo(outbound);
  }

  /**
   * The sample's {@code metrics} section records into the admin listener's registry ({@code serve
   * --config ... --admin-port}), without the tag it blocks.
   */
  @Test
  void theFilesMetricsGoToTheAdminListener() throws Exception {
    Map<String, String> ports =
        Map.of(
            "HTTP_PORT", String.valueOf(freePort()),
            "GRPC_PORT", String.valueOf(freePort()),
            "TCHANNEL_PORT", String.valueOf(freePort()));
    Serve withAdmin = Serve.startFromConfig(SAMPLE, ports::get, 0);
    try {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      int status =
          CallCommand.run(
              new String[] {
                "--config",
                SAMPLE.toString(),
                "--outbound",
                "over-http",
                "--procedure",
                "echo/raw",
                "--encoding",
                "raw",
                "--timeout",
                "10s",
                "metered"
              },
              new PrintStream(out, true, StandardCharsets.UTF_8),
              new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
              ports::get);
      assertThat(status).isZero();
      String metrics =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(URI.create(withAdmin.admin().url("/metrics"))).build(),
                  HttpResponse.BodyHandlers.ofString())
              .body();
      List<String> calls =
          metrics
              .lines()
              .filter(l -> l.startsWith("calls_total{") && l.contains("procedure=\"echo_raw\""))
              .toList();
      assertThat(calls)
          .singleElement()
          .satisfies(
              l ->
                  assertThat(l)
                      .contains("routing_delegate=\"__dropped__\"", "transport=\"http\"")
                      .endsWith(" 1.0"));
    } finally {
      withAdmin.close();
    }
  }

  @Test
  void anUnknownOutboundIsAUsageError() {
    Run run =
        call(
            "--config",
            SAMPLE.toString(),
            "--outbound",
            "nowhere",
            "--procedure",
            "echo/raw",
            "--encoding",
            "raw",
            "x");
    assertThat(run.status()).isEqualTo(2);
    assertThat(run.err())
        .contains(
            "has no outbound \"nowhere\"; its outbounds: [over-http, over-grpc, over-tchannel]");
  }

  @Test
  void peerFlagsAndConfigDoNotMix() {
    Run run =
        call(
            "--config",
            SAMPLE.toString(),
            "--outbound",
            "over-http",
            "--peer",
            "127.0.0.1:1",
            "--procedure",
            "echo/raw",
            "--encoding",
            "raw",
            "x");
    assertThat(run.status()).isEqualTo(2);
    assertThat(run.err())
        .contains("--peer cannot be used with --config (the outbound comes from the file)");
  }

  @Test
  void aBadFileIsReportedWithEveryProblem(@TempDir Path dir) throws Exception {
    Path bad = dir.resolve("bad.yaml");
    Files.writeString(
        bad,
        "inbounds:\n  http:\n    address: 127.0.0.1:0\n    shutdownTimeout: 5\n"
            + "outbounds:\n  x:\n    grpc: {peer: nowhere}\n");
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status =
        Main.run(
            new String[] {"serve", "--config", bad.toString()},
            new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    assertThat(status).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .isEqualTo(
            "serve: invalid yarpc configuration ("
                + bad
                + "): 2 problems\n"
                + "  inbounds.http.shutdownTimeout: not a duration: 5 (missing unit: write e.g. 5s"
                + " or 5ms)\n"
                + "  outbounds.x.grpc.peer: not host:port: \"nowhere\" (no port)\n");
    List<String> mixed =
        new ArrayList<>(List.of("serve", "--config", bad.toString(), "--http-port", "1"));
    ByteArrayOutputStream err2 = new ByteArrayOutputStream();
    assertThat(
            Main.run(
                mixed.toArray(String[]::new),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                new PrintStream(err2, true, StandardCharsets.UTF_8)))
        .isEqualTo(2);
    assertThat(err2.toString(StandardCharsets.UTF_8))
        .contains("--http-port cannot be used with --config (the file declares the inbounds)");
  }
}
