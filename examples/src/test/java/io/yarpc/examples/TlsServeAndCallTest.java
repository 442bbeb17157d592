package io.yarpc.examples;

import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.examples.repo.RepoRoot;
import io.yarpc.examples.tls.MutualTlsExample;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The README's TLS walk-through as a user runs it: its {@code openssl} lines make the certificates, {@code
 * serve} takes the TLS flags on all three inbounds, {@code call}, curl and {@code openssl s_client} reach
 * them, and {@link MutualTlsExample} authorizes by certificate.
 */
@Timeout(180)
class TlsServeAndCallTest {
  @TempDir static Path dir;
  static Path certs;
  static Serve enforced;

  @BeforeAll
  static void makeCertificatesAndServe() throws Exception {
    String script = readmeShellBlock("tls-certs");
    Process p =
        new ProcessBuilder("bash", "-euo", "pipefail", "-c", script)
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(output).isZero();
    certs = dir.resolve("certs");
    for (String f : List.of("ca.pem", "server.pem", "server.key", "client.pem", "client.key")) {
      assertThat(certs.resolve(f)).isRegularFile();
    }
    enforced = serve("--tls-ca", certs.resolve("ca.pem").toString());
  }

  @AfterAll
  static void stop() {
    if (enforced != null) {
      enforced.close();
    }
  }

  /** The {@code sh} block after {@code <!-- readme-shell: NAME -->} in the README. */
  static String readmeShellBlock(String name) throws IOException {
    List<String> lines = Files.readAllLines(RepoRoot.find().resolve("README.md"));
    int marker = lines.indexOf("<!-- readme-shell: " + name + " -->");
    assertThat(marker).as("README marker for %s", name).isNotNegative();
    assertThat(lines.get(marker + 1)).isEqualTo("```sh");
    StringBuilder b = new StringBuilder();
    for (int i = marker + 2; !lines.get(i).equals("```"); i++) {
      b.append(lines.get(i)).append('\n');
    }
    return b.toString();
  }

  /** {@code serve}'s flags parsed as the command parses them, on free ports. */
  static Serve serve(String... extra) throws Flags.UsageException {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--tls-cert",
                certs.resolve("server.pem").toString(),
                "--tls-key",
                certs.resolve("server.key").toString()));
    args.addAll(List.of(extra));
    Flags flags = Serve.FLAGS.parse(args.toArray(String[]::new));
    return Serve.start("127.0.0.1", 0, 0, 0, TlsFlags.server(flags), TlsFlags.mode(flags));
  }

  record Run(int status, String out, String err) {}

  static Run call(Serve serve, String transport, String... tlsFlags) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--peer",
                serve.peers().get(transport),
                "--transport",
                transport,
                "--service",
                "yarpc-test",
                "--procedure",
                "echo/raw",
                "--encoding",
                "raw",
                "--timeout",
                "10s"));
    args.addAll(List.of(tlsFlags));
    args.add("hello");
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status =
        CallCommand.run(
            args.toArray(String[]::new),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Run(
        status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  private static String[] caOnly() {
    return new String[] {"--tls-ca", certs.resolve("ca.pem").toString()};
  }

  private static String[] withClientCertificate() {
    return new String[] {
      "--tls-ca", certs.resolve("ca.pem").toString(),
      "--tls-cert", certs.resolve("client.pem").toString(),
      "--tls-key", certs.resolve("client.key").toString()
    };
  }

  @ParameterizedTest
  @ValueSource(strings = {"http", "grpc", "tchannel"})
  void callReachesEveryTlsInboundWithAndWithoutAClientCertificate(String transport) {
    Run serverOnly = call(enforced, transport, caOnly());
    assertThat(serverOnly.status()).as(serverOnly.err()).isZero();
    assertThat(serverOnly.out()).contains("\"body\": \"hello\"");
    Run mutual = call(enforced, transport, withClientCertificate());
    assertThat(mutual.status()).as(mutual.err()).isZero();
    assertThat(mutual.out()).contains("\"body\": \"hello\"");
  }

  @ParameterizedTest
  @ValueSource(strings = {"http", "grpc", "tchannel"})
  void aPlaintextCallToAnEnforcedPortFails(String transport) {
    Run run = call(enforced, transport, "--timeout", "1s");
    assertThat(run.status()).isEqualTo(1);
    assertThat(run.err()).startsWith("Error: code:");
    if (!transport.equals("grpc")) { // gRPC's answer is a close, which carries no text
      assertThat(run.err()).contains("TLS");
    }
  }

  @Test
  void aClientThatDoesNotTrustTheCaIsRefusedWithTheReason() {
    // call's outbound waits for a usable peer until the deadline; the error then says why there was
    // none
    Run run =
        call(
            enforced,
            "grpc",
            "--tls-ca",
            certs.resolve("client.pem").toString(),
            "--timeout",
            "1s");
    assertThat(run.status()).isEqualTo(1);
    assertThat(run.err())
        .contains("code:deadline-exceeded")
        .contains("while waiting for a peer")
        .contains("TLS handshake failed: the certificate is not signed by a trusted root");
  }

  @Test
  void aPermissiveServeTakesPlaintextAndTlsOnOnePort() throws Exception {
    Serve permissive = serve("--tls-mode", "permissive");
    try {
      for (String transport : List.of("http", "grpc", "tchannel")) {
        Run plain = call(permissive, transport);
        assertThat(plain.status()).as(transport + ": " + plain.err()).isZero();
        Run tls = call(permissive, transport, caOnly());
        assertThat(tls.status()).as(transport + ": " + tls.err()).isZero();
      }
    } finally {
      permissive.close();
    }
  }

  @Test
  void curlAndOpensslReachTheHttpAndGrpcInbounds() throws Exception {
    String url = "https://" + enforced.peers().get("http") + "/";
    for (String version : List.of("--http1.1", "--http2")) {
      String out =
          run(
              "curl",
              "-sS",
              "--cacert",
              certs.resolve("ca.pem").toString(),
              version,
              "-w",
              " %{http_version}",
              url,
              "-H",
              "Rpc-Caller: curl",
              "-H",
              "Rpc-Service: yarpc-test",
              "-H",
              "Rpc-Procedure: echo/raw",
              "-H",
              "Rpc-Encoding: raw",
              "-H",
              "Context-TTL-MS: 5000",
              "--data",
              "hello");
      assertThat(out).isEqualTo("hello " + (version.equals("--http2") ? "2" : "1.1"));
    }
    String s =
        run(
            "openssl",
            "s_client",
            "-connect",
            enforced.peers().get("grpc"),
            "-alpn",
            "h2",
            "-CAfile",
            certs.resolve("ca.pem").toString());
    assertThat(s).contains("ALPN protocol: h2").contains("Verify return code: 0 (ok)");
  }

  @Test
  void badTlsFlagsAreUsageErrors() throws Exception {
    assertThat(
            call(enforced, "grpc", "--tls-cert", certs.resolve("client.pem").toString()).status())
        .isEqualTo(2);
    Run missing = call(enforced, "grpc", "--tls-ca", dir.resolve("nope.pem").toString());
    assertThat(missing.status()).isEqualTo(2);
    assertThat(missing.err()).contains("nope.pem cannot be read");
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status =
        Main.run(
            new String[] {"serve", "--tls-mode", "sometimes"},
            new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    assertThat(status).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("--tls-mode must be disabled, permissive or enforced, got \"sometimes\"");
  }

  @Test
  void theMutualTlsExampleAuthorizesByCertificate() {
    assertThat(MutualTlsExample.run(certs))
        .containsExactly(
            "client certificate, open:  the vault is open",
            "client certificate, empty: permission-denied: CN=client may not call \"empty\"",
            "no certificate, open:      unauthenticated: a client certificate is required");
  }

  @Test
  void theServeBannerShowsHttpsLines() {
    ByteArrayOutputStream banner = new ByteArrayOutputStream();
    enforced.printBanner(new PrintStream(banner, true, StandardCharsets.UTF_8));
    String text = banner.toString(StandardCharsets.UTF_8);
    assertThat(text).contains("with TLS enforced").contains("curl -sS --cacert ca.pem https://");
  }

  private static String run(String... command) throws Exception {
    Process p =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    return out;
  }
}
