package io.yarpc.transport.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.yarpc.Dispatcher;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.testing.TestCertificates;
import io.yarpc.tls.ClientAuth;
import io.yarpc.tls.TlsMode;
import io.yarpc.tls.TlsProvider;
import io.yarpc.transport.ConnectionInfo;
import io.yarpc.transport.Request;
import io.yarpc.transport.Response;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The TLS inbound against the command-line clients (each test skipped when its tool is not installed):
 * curl over HTTP/1.1 and HTTP/2 (ALPN), with and without a client certificate, and plaintext curl at an
 * enforced port; {@code openssl s_client} for the ALPN protocol chosen and the chain's verification. For
 * each TLS provider that loads here.
 */
class CurlTlsInteropTest {
  @TempDir static Path dir;
  private static TestCertificates certs;

  private Dispatcher dispatcher;
  private HttpInbound inbound;
  private final BlockingQueue<ConnectionInfo> connections = new LinkedBlockingQueue<>();

  @BeforeAll
  static void certificates() {
    certs = TestCertificates.generate(dir);
  }

  @AfterEach
  void stop() {
    if (dispatcher != null) {
      dispatcher.stop();
    }
  }

  static Stream<TlsProvider> providers() {
    return TlsTesting.providers().stream();
  }

  private void start(HttpInbound.Builder inboundBuilder) {
    inbound = inboundBuilder.build();
    dispatcher =
        Dispatcher.builder(YarpcTestService.NAME)
            .inbound(inbound)
            .unaryInboundMiddleware(
                (Request request, io.yarpc.transport.Handler<Request, Response> next) -> {
                  connections.add(request.meta().connection());
                  return next.handle(request);
                })
            .build();
    dispatcher.register(Raw.procedure("echo", body -> body));
    dispatcher.start();
  }

  private void start(TlsProvider p, ClientAuth clientAuth) {
    HttpTransport t = HttpTransport.builder().eventLoopThreads(1).build();
    start(t.inboundBuilder().tls(certs.serverConfig(clientAuth).provider(p).build()));
  }

  private int port() {
    return inbound.address().getPort();
  }

  /** curl's {@code -w} output ({@code http_version response_code}) and the body, or its error. */
  private TlsTesting.Run curl(Path tmp, String url, String... options) throws Exception {
    Path body = tmp.resolve("body-" + System.nanoTime());
    List<String> cmd =
        new ArrayList<>(
            List.of(
                "curl",
                "-sS",
                "--resolve",
                "localhost:" + port() + ":127.0.0.1",
                "-o",
                body.toString(),
                "-w",
                "%{http_version} %{response_code}",
                "--data-binary",
                "hello",
                "-H",
                "Rpc-Caller: curl",
                "-H",
                "Rpc-Service: " + YarpcTestService.NAME,
                "-H",
                "Rpc-Procedure: echo",
                "-H",
                "Rpc-Encoding: raw",
                "-H",
                "Context-TTL-MS: 5000",
                "-H",
                "Content-Type:"));
    cmd.addAll(List.of(options));
    cmd.add(url);
    TlsTesting.Run r = TlsTesting.run(cmd.toArray(new String[0]));
    String received = Files.exists(body) ? Files.readString(body) : "";
    return new TlsTesting.Run(r.exitCode(), r.output() + "|" + received);
  }

  private String https() {
    return "https://localhost:" + port() + "/";
  }

  @ParameterizedTest
  @MethodSource("providers")
  void curlOverHttp11AndHttp2(TlsProvider p, @TempDir Path tmp) throws Exception {
    assumeTrue(TlsTesting.installed("curl"), "curl is not installed");
    start(p, ClientAuth.NONE);
    String ca = certs.caCertificate().toString();

    TlsTesting.Run h1 = curl(tmp, https(), "--cacert", ca, "--http1.1");
    assertThat(h1.exitCode()).as(h1.output()).isZero();
    assertThat(h1.output()).isEqualTo("1.1 200|hello");

    TlsTesting.Run h2 = curl(tmp, https(), "--cacert", ca, "--http2");
    assertThat(h2.exitCode()).as(h2.output()).isZero();
    assertThat(h2.output()).isEqualTo("2 200|hello");

    ConnectionInfo c = connections.poll(10, TimeUnit.SECONDS);
    assertThat(c.isTls()).isTrue();
    assertThat(c.hasPeerCertificate()).isFalse();
  }

  @ParameterizedTest
  @MethodSource("providers")
  void curlWithAClientCertificateAtAMutualTlsPort(TlsProvider p, @TempDir Path tmp)
      throws Exception {
    assumeTrue(TlsTesting.installed("curl"), "curl is not installed");
    start(p, ClientAuth.REQUIRE);
    String ca = certs.caCertificate().toString();
    String cert = certs.client().certificate().toString();
    String key = certs.client().key().toString();

    for (String version : new String[] {"--http1.1", "--http2"}) {
      TlsTesting.Run r = curl(tmp, https(), "--cacert", ca, "--cert", cert, "--key", key, version);
      assertThat(r.exitCode()).as(r.output()).isZero();
      assertThat(r.output()).endsWith(" 200|hello");
      ConnectionInfo c = connections.poll(10, TimeUnit.SECONDS);
      assertThat(c.peerSubject()).isEqualTo("CN=test-client");
      assertThat(c.peerSubjectAlternativeNames()).contains("URI:spiffe://yarpc.test/client");
    }

    TlsTesting.Run without = curl(tmp, https(), "--cacert", ca);
    assertThat(without.exitCode()).as(without.output()).isNotZero();
    assertThat(connections).isEmpty();
  }

  @Test
  void plaintextCurlAtAnEnforcedPortReadsWhy(@TempDir Path tmp) throws Exception {
    assumeTrue(TlsTesting.installed("curl"), "curl is not installed");
    start(TlsProvider.JDK, ClientAuth.NONE);
    TlsTesting.Run r = curl(tmp, "http://127.0.0.1:" + port() + "/");
    assertThat(r.exitCode()).as(r.output()).isZero();
    assertThat(r.output()).isEqualTo("1.1 400|this port requires TLS\n");

    TlsTesting.Run h2c = curl(tmp, "http://127.0.0.1:" + port() + "/", "--http2-prior-knowledge");
    assertThat(h2c.exitCode()).as("curl fails: %s", h2c.output()).isNotZero();
    assertThat(connections).isEmpty();
  }

  @Test
  void curlPlaintextAndTlsAtAPermissivePort(@TempDir Path tmp) throws Exception {
    assumeTrue(TlsTesting.installed("curl"), "curl is not installed");
    HttpTransport t = HttpTransport.builder().eventLoopThreads(1).build();
    start(t.inboundBuilder().tls(certs.serverConfig(ClientAuth.NONE).build(), TlsMode.PERMISSIVE));
    String ca = certs.caCertificate().toString();

    assertThat(curl(tmp, "http://127.0.0.1:" + port() + "/").output()).isEqualTo("1.1 200|hello");
    assertThat(connections.poll(10, TimeUnit.SECONDS).isTls()).isFalse();
    assertThat(curl(tmp, "http://127.0.0.1:" + port() + "/", "--http2-prior-knowledge").output())
        .isEqualTo("2 200|hello");
    assertThat(connections.poll(10, TimeUnit.SECONDS).isTls()).isFalse();
    assertThat(curl(tmp, https(), "--cacert", ca, "--http2").output()).isEqualTo("2 200|hello");
    assertThat(connections.poll(10, TimeUnit.SECONDS).isTls()).isTrue();
  }

  @ParameterizedTest
  @MethodSource("providers")
  void opensslSeesTheAlpnProtocolAndAVerifiedChain(TlsProvider p) throws Exception {
    assumeTrue(TlsTesting.installed("openssl"), "openssl is not installed");
    start(p, ClientAuth.NONE);
    String ca = certs.caCertificate().toString();

    for (String alpn : new String[] {"h2", "http/1.1"}) {
      TlsTesting.Run r =
          TlsTesting.run(
              "openssl",
              "s_client",
              "-connect",
              "127.0.0.1:" + port(),
              "-servername",
              "localhost",
              "-verify_hostname",
              "localhost",
              "-alpn",
              alpn,
              "-CAfile",
              ca);
      assertThat(r.output())
          .contains("ALPN protocol: " + alpn)
          .contains("Verify return code: 0 (ok)")
          .contains("New, TLSv1.3")
          .contains("Verified peername: localhost");
    }
  }

  @Test
  void opensslGetsHttp11FromAnInboundWithoutHttp2() throws Exception {
    assumeTrue(TlsTesting.installed("openssl"), "openssl is not installed");
    HttpTransport t = HttpTransport.builder().eventLoopThreads(1).build();
    start(t.inboundBuilder().http2(false).tls(certs.serverConfig(ClientAuth.NONE).build()));
    TlsTesting.Run r =
        TlsTesting.run(
            "openssl",
            "s_client",
            "-connect",
            "127.0.0.1:" + port(),
            "-alpn",
            "h2,http/1.1",
            "-CAfile",
            certs.caCertificate().toString());
    assertThat(r.output())
        .contains("ALPN protocol: http/1.1")
        .contains("Verify return code: 0 (ok)");
  }
}
