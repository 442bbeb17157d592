package io.yarpc.transport.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Interop with curl (skipped when it is not installed): h2c with prior knowledge against the inbound's
 * HTTP/1.1 port, and HTTP/1.1 with {@code Expect: 100-continue}. Checks status, headers and body exactly.
 */
class CurlInteropTest {
  private static YarpcTestService server;

  @BeforeAll
  static void start() {
    assumeTrue(curlAvailable(), "curl is not installed");
    server = new YarpcTestService();
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      server.close();
    }
  }

  private static boolean curlAvailable() {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      if (Files.isExecutable(Path.of(dir, "curl"))) {
        return true;
      }
    }
    return false;
  }

  record Res(String protocol, int status, Map<String, String> headers, String body) {}

  static Res curl(Path tmp, List<String> options, String... headers) throws Exception {
    Path body = tmp.resolve("body-" + System.nanoTime());
    List<String> cmd = new ArrayList<>(List.of("curl", "-sS", "-D", "-", "-o", body.toString()));
    cmd.addAll(options);
    for (String h : headers) {
      cmd.add("-H");
      cmd.add(h);
    }
    cmd.add("http://" + server.hostPort() + "/");
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    // the last response head (curl prints a 100 Continue head first)
    String[] heads = out.trim().split("\r\n\r\n");
    String[] lines = heads[heads.length - 1].split("\r\n");
    String[] status = lines[0].split(" ");
    Map<String, String> h = new LinkedHashMap<>();
    for (int i = 1; i < lines.length; i++) {
      int colon = lines[i].indexOf(':');
      h.put(
          lines[i].substring(0, colon).toLowerCase(Locale.ROOT),
          lines[i].substring(colon + 1).trim());
    }
    return new Res(status[0], Integer.parseInt(status[1]), h, Files.readString(body));
  }

  @Test
  void h2cEcho(@TempDir Path tmp) throws Exception {
    Res r =
        curl(
            tmp,
            List.of("--http2-prior-knowledge", "--data-binary", "{\"token\":\"h2\"}"),
            "Rpc-Caller: curl",
            "Rpc-Service: yarpc-test",
            "Rpc-Procedure: echo",
            "Rpc-Encoding: json",
            "Context-TTL-MS: 5000",
            "Content-Type:");
    assertThat(r.protocol()).isEqualTo("HTTP/2");
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.body()).isEqualTo("{\"token\":\"h2\"}\n");
    assertThat(r.headers())
        .containsEntry("rpc-status", "success")
        .containsEntry("rpc-service", "yarpc-test")
        .containsEntry("content-type", "application/json")
        .containsEntry("content-length", "15");
  }

  @Test
  void h2cRequestsCarryTransportNameHttp2(@TempDir Path tmp) throws Exception {
    Res r =
        curl(
            tmp,
            List.of("--http2-prior-knowledge", "--data-binary", ""),
            "Rpc-Caller: curl",
            "Rpc-Service: yarpc-test",
            "Rpc-Procedure: meta",
            "Rpc-Encoding: raw",
            "Context-TTL-MS: 5000",
            "Rpc-Header-Foo: bar",
            "Content-Type:",
            "User-Agent:",
            "Accept:");
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.body())
        .contains(
            "\"transport\":\"http2\"", "\"caller\":\"curl\"", "\"headers\":{\"foo\":\"bar\"}");
  }

  @Test
  void h2cErrors(@TempDir Path tmp) throws Exception {
    Res r =
        curl(
            tmp,
            List.of("--http2-prior-knowledge", "--data-binary", "{}"),
            "Rpc-Caller: curl",
            "Rpc-Service: yarpc-test",
            "Rpc-Procedure: echo",
            "Rpc-Encoding: json",
            "Context-TTL-MS: moo",
            "Content-Type:");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.body())
        .isEqualTo("invalid TTL \"moo\" for service \"yarpc-test\" and procedure \"echo\"\n");
    assertThat(r.headers())
        .containsEntry("rpc-error-code", "invalid-argument")
        .containsEntry("content-type", "text/plain; charset=utf8");

    r =
        curl(
            tmp,
            List.of("--http2-prior-knowledge", "--data-binary", "{}"),
            "Rpc-Caller: curl",
            "Rpc-Service: yarpc-test",
            "Rpc-Procedure: unexpected-error",
            "Rpc-Encoding: json",
            "Context-TTL-MS: 5000",
            "Rpc-Accepts-Both-Response-Error: true",
            "Content-Type:");
    assertThat(r.status()).isEqualTo(500);
    assertThat(r.body()).isEmpty();
    assertThat(r.headers())
        .containsEntry("rpc-both-response-error", "true")
        .containsEntry("rpc-error-code", "unknown")
        .containsEntry("rpc-status", "error")
        .containsEntry(
            "rpc-error-message",
            "error for service \"yarpc-test\" and procedure \"unexpected-error\": unexpected error (the server logged it)");

    r = curl(tmp, List.of("--http2-prior-knowledge"), "Rpc-Service: yarpc-test");
    assertThat(r.status()).isEqualTo(404);
    assertThat(r.body()).isEqualTo("request method was GET but only POST is allowed\n");
  }

  @Test
  void http11ExpectContinueWithALargeBody(@TempDir Path tmp) throws Exception {
    byte[] big = new byte[3 << 20];
    java.util.Arrays.fill(big, (byte) 'x');
    Path file = tmp.resolve("big");
    Files.write(file, big);
    Res r =
        curl(
            tmp,
            List.of("--http1.1", "--data-binary", "@" + file),
            "Rpc-Caller: curl",
            "Rpc-Service: yarpc-test",
            "Rpc-Procedure: echo/raw",
            "Rpc-Encoding: raw",
            "Context-TTL-MS: 5000",
            "Expect: 100-continue");
    assertThat(r.protocol()).isEqualTo("HTTP/1.1");
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.body()).hasSize(big.length);
    assertThat(r.headers()).containsEntry("content-type", "application/octet-stream");
  }
}
