package io.yarpc.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.yarpc.CallOptions;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.observability.admin.AdminServer;
import io.yarpc.peer.RoundRobinPeerList;
import io.yarpc.tls.TlsMode;
import io.yarpc.transport.grpc.GrpcTransport;
import io.yarpc.transport.http.HttpTransport;
import io.yarpc.transport.tchannel.TChannelTransport;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code serve --admin-port}: the banner's admin URLs, the endpoints, and the debug page as a real browser
 * renders it (Debian's {@code chromium}, headless): the DOM it builds and a screenshot saved as {@code
 * examples/target/debug-yarpc.png} (and {@code debug-yarpc-client.png}, the page of a client dispatcher
 * with peers). Without chromium the browser tests are skipped, unless {@code YARPC_REQUIRE_PEERS} is set
 * (as {@code .ci/run} sets it, after installing it): then they fail.
 */
@Timeout(180)
class AdminPageTest {
  private static final Path TARGET = Path.of("target");
  private static Serve serve;
  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @BeforeAll
  static void startServe() {
    serve = Serve.start("127.0.0.1", 0, 0, 0, null, TlsMode.DISABLED, 0);
  }

  @AfterAll
  static void stopServe() {
    if (serve != null) {
      serve.close();
      assertThat(serve.admin().isRunning()).isFalse();
    }
  }

  @Test
  void bannerPrintsTheAdminUrls() {
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    serve.printBanner(new PrintStream(printed, true, StandardCharsets.UTF_8));
    String banner = printed.toString(StandardCharsets.UTF_8);
    AdminServer admin = serve.admin();
    assertThat(banner)
        .contains("admin (plain HTTP on 127.0.0.1:" + admin.address().getPort() + "):")
        .contains(admin.url("/debug/yarpc") + " ")
        .contains(admin.url("/debug/yarpc.json"))
        .contains(admin.url("/metrics"))
        .contains(admin.url("/health"));
  }

  @Test
  void servesHealthMetricsAndThePage() throws Exception {
    HttpResponse<String> health = get(serve.admin().url("/health"));
    assertThat(health.statusCode()).isEqualTo(200);
    assertThat(health.body()).isEqualTo("SERVING\n");
    HttpResponse<String> metrics = get(serve.admin().url("/metrics"));
    assertThat(metrics.statusCode()).isEqualTo(200);
    assertThat(metrics.headers().firstValue("content-type"))
        .hasValue("text/plain; version=0.0.4; charset=utf-8");
    assertThat(metrics.body()).contains("jvm_memory_used_bytes", "process_uptime_seconds");
    // one call, then its metrics (YarpcMetrics, installed by Serve) are on /metrics too
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int status =
        CallCommand.run(
            new String[] {
              "--peer",
              serve.peers().get("http"),
              "--transport",
              "http",
              "--service",
              "yarpc-test",
              "--timeout",
              "10s",
              "--procedure",
              "echo/raw",
              "--encoding",
              "raw",
              "hi"
            },
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
    assertThat(status).isZero();
    assertThat(get(serve.admin().url("/metrics")).body())
        .containsPattern(
            "calls_total\\{[^}]*direction=\"inbound\"[^}]*procedure=\"echo_raw\"[^}]*"
                + "transport=\"http\"[^}]*\\} 1\\.0");
    HttpResponse<String> json = get(serve.admin().url("/debug/yarpc.json"));
    assertThat(json.body())
        .contains("\"name\": \"yarpc-test\"", "yarpc.examples.keyvalue.KeyValue::GetValue");
  }

  @Test
  void aBadAdminPortIsAUsageError() throws Exception {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status =
        Main.run(
            new String[] {"serve", "--admin-port", "99999"},
            new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    assertThat(status).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("--admin-port must be a port number (0 to 65535), got \"99999\"");
  }

  @Test
  void aBrowserRendersTheServePageWithProceduresInboundsAndACallInFlight() throws Exception {
    Path chromium = chromium();
    // a call in flight while the browser looks: sleep/raw waits until cancelled
    Dispatcher client = clientOf(List.of());
    CompletableFuture<byte[]> sleeping =
        RawClient.of(client.clientConfig("via-http"))
            .call("sleep/raw", "60000".getBytes(StandardCharsets.UTF_8), slowOptions());
    try {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (serve.dispatcher().inFlightCalls() == 0 && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      String dom = dumpDom(chromium, serve.admin().url("/debug/yarpc"));
      assertThat(dom)
          .contains("<h1 id=\"service\">yarpc-test</h1>")
          .contains("<span id=\"state\" class=\"badge ok\">RUNNING</span>")
          .contains("<b id=\"calls-in-flight\">1</b>")
          .contains("<td class=\"mono\">echo/raw</td>")
          .contains("<td class=\"mono\">sleep/raw</td>")
          .contains("<td class=\"mono\">yarpc.examples.keyvalue.KeyValue::GetValue</td>")
          .contains("<td class=\"mono\">yarpc.examples.echo.Echo::Echo</td>")
          .contains("<td class=\"num busy\">1</td>")
          .contains("<td class=\"mono\">" + serve.peers().get("http") + "</td>")
          .contains("<td class=\"mono\">" + serve.peers().get("grpc") + "</td>")
          .contains("<td class=\"mono\">" + serve.peers().get("tchannel") + "</td>");
      Path png = screenshot(chromium, serve.admin().url("/debug/yarpc"), "debug-yarpc.png");
      assertPng(png);
    } finally {
      sleeping.cancel(true);
    }
  }

  @Test
  void aBrowserRendersAClientsPeersIncludingAnUnreachableOne() throws Exception {
    Path chromium = chromium();
    String dead = deadAddress();
    Dispatcher client = clientOf(List.of(dead));
    AdminServer admin = AdminServer.builder(client).build().start();
    try {
      assertThat(
              RawClient.of(client.clientConfig("via-tchannel"))
                  .call("echo/raw", new byte[] {1}, slowOptions())
                  .get(20, TimeUnit.SECONDS))
          .containsExactly(1);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (!deadPeerHasAReason(client, dead) && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      String dom = dumpDom(chromium, admin.url("/debug/yarpc"));
      assertThat(dom)
          .contains("<table id=\"peers\">")
          .contains("<td class=\"mono\">" + serve.peers().get("http") + "</td>")
          .contains("<td class=\"mono\">" + serve.peers().get("grpc") + "</td>")
          .contains("<td class=\"mono\">" + serve.peers().get("tchannel") + "</td>")
          .contains("<td class=\"mono\">" + dead + "</td>")
          .contains("<tr class=\"peer available\">")
          .containsPattern("<tr class=\"peer (unavailable|connecting)\">")
          .containsIgnoringCase("refused")
          .contains("round-robin", "single");
      assertPng(screenshot(chromium, admin.url("/debug/yarpc"), "debug-yarpc-client.png"));
    } finally {
      admin.stop();
    }
  }

  // ---------------------------------------------------------------------------------------------------

  private final List<Runnable> stops = new ArrayList<>();

  @org.junit.jupiter.api.AfterEach
  void stopClients() {
    for (int i = stops.size() - 1; i >= 0; i--) {
      stops.get(i).run();
    }
  }

  /** A client of serve over each transport; the TChannel outbound a round-robin list with extras. */
  private Dispatcher clientOf(List<String> extraTchannelPeers) {
    HttpTransport ht = HttpTransport.create();
    GrpcTransport gt = GrpcTransport.create();
    TChannelTransport tt = TChannelTransport.of("admin-page-test");
    List<String> ring = new ArrayList<>(List.of(serve.peers().get("tchannel")));
    ring.addAll(extraTchannelPeers);
    Dispatcher d =
        Dispatcher.builder("admin-page-test")
            .logLifecycle(false)
            .outbound(
                "via-http",
                Outbounds.builder()
                    .serviceName(Serve.SERVICE)
                    .unary(ht.singleOutbound(serve.peers().get("http")))
                    .build())
            .outbound(
                "via-grpc",
                Outbounds.builder()
                    .serviceName(Serve.SERVICE)
                    .unary(gt.singleOutbound(serve.peers().get("grpc")))
                    .build())
            .outbound(
                "via-tchannel",
                Outbounds.builder()
                    .serviceName(Serve.SERVICE)
                    .unary(tt.outbound(RoundRobinPeerList.builder(tt).peers(ring).build()))
                    .build())
            .build();
    d.start();
    stops.add(
        () -> {
          d.stop();
          ht.stop();
          gt.stop();
          tt.stop();
        });
    return d;
  }

  private static boolean deadPeerHasAReason(Dispatcher client, String dead) {
    return client.introspect().outbounds().stream()
        .flatMap(o -> o.chooser().peers().stream())
        .anyMatch(p -> p.identifier().equals(dead) && p.unavailableReason() != null);
  }

  private static CallOptions slowOptions() {
    return CallOptions.timeout(Duration.ofSeconds(90));
  }

  private HttpResponse<String> get(String url) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(20)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static String deadAddress() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return "127.0.0.1:" + s.getLocalPort();
    }
  }

  // ---- the browser ----

  /** Debian's chromium; skips the test without it, fails it when YARPC_REQUIRE_PEERS is set. */
  private static Path chromium() {
    Path found = null;
    for (String candidate : new String[] {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
      if (Files.isExecutable(Path.of(candidate))) {
        found = Path.of(candidate);
        break;
      }
    }
    if (System.getenv("YARPC_REQUIRE_PEERS") != null) { // .ci/run installs it: missing fails there
      assertThat(found).as("chromium (apt-get install chromium)").isNotNull();
    }
    assumeTrue(found != null, "chromium is not installed (apt-get install chromium)");
    return found;
  }

  private static List<String> browser(Path chromium, Path profile) {
    return new ArrayList<>(
        List.of(
            chromium.toString(),
            "--headless",
            "--no-sandbox", // tests run as root in CI
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--user-data-dir=" + profile));
  }

  /** The DOM chromium built from {@code url}, as {@code --dump-dom} prints it. */
  private static String dumpDom(Path chromium, String url) throws Exception {
    Path profile = Files.createTempDirectory("yarpc-chromium");
    List<String> command = browser(chromium, profile);
    command.add("--dump-dom");
    command.add(url);
    Path out = Files.createTempFile("yarpc-dom", ".html");
    Path err = Files.createTempFile("yarpc-dom", ".log");
    Process p =
        new ProcessBuilder(command)
            .redirectOutput(out.toFile())
            .redirectError(err.toFile())
            .start();
    try {
      assertThat(p.waitFor(90, TimeUnit.SECONDS)).as("chromium finished").isTrue();
      String dom = Files.readString(out, StandardCharsets.UTF_8);
      assertThat(p.exitValue()).as("chromium exit; stderr:\n%s", Files.readString(err)).isZero();
      return dom;
    } finally {
      p.destroyForcibly();
      Files.deleteIfExists(out);
      Files.deleteIfExists(err);
      deleteTree(profile);
    }
  }

  /** A 1280x1024 screenshot of {@code url} saved as {@code target/<name>}. */
  private static Path screenshot(Path chromium, String url, String name) throws Exception {
    Files.createDirectories(TARGET);
    Path png = TARGET.resolve(name).toAbsolutePath();
    Files.deleteIfExists(png);
    Path profile = Files.createTempDirectory("yarpc-chromium");
    List<String> command = browser(chromium, profile);
    command.add("--hide-scrollbars");
    command.add("--window-size=1280,1024");
    command.add("--screenshot=" + png);
    command.add(url);
    Path log = Files.createTempFile("yarpc-screenshot", ".log");
    Process p =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    try {
      assertThat(p.waitFor(90, TimeUnit.SECONDS)).as("chromium finished").isTrue();
      assertThat(p.exitValue()).as("chromium exit; output:\n%s", Files.readString(log)).isZero();
      return png;
    } finally {
      p.destroyForcibly();
      Files.deleteIfExists(log);
      deleteTree(profile);
    }
  }

  private static void assertPng(Path png) throws IOException {
    assertThat(png).exists();
    byte[] bytes = Files.readAllBytes(png);
    assertThat(bytes.length).as("PNG size").isGreaterThan(1000);
    assertThat(java.util.Arrays.copyOf(bytes, 8))
        .as("PNG signature")
        .containsExactly(0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n');
    // IHDR: width and height as asked
    int width = java.nio.ByteBuffer.wrap(bytes, 16, 4).getInt();
    int height = java.nio.ByteBuffer.wrap(bytes, 20, 4).getInt();
    assertThat(width).isEqualTo(1280);
    assertThat(height).isEqualTo(1024);
  }

  private static void deleteTree(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    try (var paths = Files.walk(root)) {
      paths
          .sorted(java.util.Comparator.reverseOrder())
          .forEach(
              p -> {
                try {
                  Files.deleteIfExists(p);
                } catch (IOException e) {
                  // a file chromium still writes: the temp directory is cleaned by the OS
                }
              });
    }
  }
}
