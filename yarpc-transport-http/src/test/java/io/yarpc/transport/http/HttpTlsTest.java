package io.yarpc.transport.http;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.yarpc.Dispatcher;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.middleware.Middleware;
import io.yarpc.peer.ConnectionStatus;
import io.yarpc.peer.Peer;
import io.yarpc.peer.PeerSubscriber;
import io.yarpc.testing.TestCertificates;
import io.yarpc.tls.ClientAuth;
import io.yarpc.tls.TlsConfig;
import io.yarpc.tls.TlsMode;
import io.yarpc.tls.TlsProvider;
import io.yarpc.transport.Body;
import io.yarpc.transport.ConnectionInfo;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.InboundLimits;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.math.BigInteger;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Stream;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * TLS at the HTTP transport with real sockets on loopback, for each TLS provider that loads here (the
 * JDK's always, OpenSSL through netty-tcnative when it loads): mutual TLS and the identity inbound
 * middleware sees, refused clients and servers with the reason the caller reads, permissive and enforced
 * ports with plaintext clients, certificate rotation, and the inbound's limits over TLS. curl and {@code
 * openssl s_client} interop is in {@link CurlTlsInteropTest}.
 */
class HttpTlsTest {
  @TempDir static Path dir;
  private static TestCertificates certs;

  private final List<AutoCloseable> closers = new ArrayList<>();

  @BeforeAll
  static void certificates() {
    certs = TestCertificates.generate(dir);
  }

  @AfterEach
  void close() throws Exception {
    Collections.reverse(closers);
    for (AutoCloseable c : closers) {
      c.close();
    }
  }

  static Stream<TlsProvider> providers() {
    return TlsTesting.providers().stream();
  }

  static Stream<Arguments> providersAndProtocols() {
    return TlsTesting.providers().stream()
        .flatMap(p -> Stream.of(Arguments.of(p, false), Arguments.of(p, true)));
  }

  // -------------------------------------------------------------------------------------------------
  // Fixtures

  /** A server whose inbound middleware records the metadata of every call it lets through. */
  final class Server {
    final HttpTransport transport = HttpTransport.builder().eventLoopThreads(1).build();
    final HttpInbound inbound;
    final BlockingQueue<RequestMeta> calls = new LinkedBlockingQueue<>();

    Server(Consumer<HttpInbound.Builder> config, Middleware<Request, Response> more) {
      HttpInbound.Builder b = transport.inboundBuilder();
      config.accept(b);
      inbound = b.build();
      Middleware<Request, Response> record =
          (request, next) -> {
            calls.add(request.meta());
            return next.handle(request);
          };
      Dispatcher d =
          Dispatcher.builder(YarpcTestService.NAME)
              .inbound(inbound)
              .unaryInboundMiddleware(record, more)
              .build();
      d.register(Raw.procedure("echo", body -> body));
      d.start();
      closers.add(
          () -> {
            d.stop();
            transport.stop();
          });
    }

    int port() {
      return inbound.address().getPort();
    }

    String https() {
      return "https://127.0.0.1:" + port();
    }

    /** The metadata of the next call the middleware saw. */
    RequestMeta nextCall() throws InterruptedException {
      RequestMeta m = calls.poll(10, TimeUnit.SECONDS);
      assertThat(m).as("a call reached the inbound middleware").isNotNull();
      return m;
    }
  }

  Server server(Consumer<HttpInbound.Builder> config) {
    return new Server(config, (request, next) -> next.handle(request));
  }

  Server tlsServer(TlsConfig config) {
    return server(b -> b.tls(config));
  }

  HttpOutbound client(TlsConfig config, String address, boolean http2) {
    HttpTransport.Builder b = HttpTransport.builder().eventLoopThreads(1);
    if (config != null) {
      b.tls(config);
    }
    HttpTransport t = b.build();
    HttpOutbound out = t.singleOutboundBuilder(address).http2(http2).build();
    out.start();
    closers.add(
        () -> {
          out.stop();
          t.stop();
        });
    return out;
  }

  static RequestMeta meta() {
    return RequestMeta.builder()
        .caller("tls-client")
        .service(YarpcTestService.NAME)
        .procedure("echo")
        .encoding("raw")
        .deadline(Deadline.after(Duration.ofSeconds(10)))
        .build();
  }

  /** Calls {@code echo} with {@code text}; what came back. */
  static String call(HttpOutbound out, String text) throws Exception {
    Response r =
        out.call(Request.of(meta(), Body.of(text.getBytes(UTF_8)))).get(20, TimeUnit.SECONDS);
    try {
      return new String(r.body().toByteArray(), UTF_8);
    } finally {
      r.body().release();
    }
  }

  /** Calls {@code echo}, which must fail; the error. */
  static YarpcException failure(HttpOutbound out) throws Exception {
    CompletableFuture<Response> f = out.call(Request.of(meta(), Body.of("x".getBytes(UTF_8))));
    try {
      Response r = f.get(20, TimeUnit.SECONDS);
      r.body().release();
      return fail("the call succeeded");
    } catch (ExecutionException e) {
      YarpcException ye = YarpcException.from(e.getCause());
      if (ye.response() != null) {
        ye.response().body().release();
      }
      return ye;
    }
  }

  /**
   * Asserts that {@code e} is {@code unavailable}, names the TLS handshake with {@code peer} and a reason,
   * and carries no class name or stack trace (a proxy may pass it on to its own caller).
   */
  static void assertHandshakeFailure(YarpcException e, String peer) {
    assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(e.getMessage()).startsWith("TLS handshake with peer " + peer + " failed: ");
    assertThat(e.getMessage())
        .doesNotContainPattern("\\b(?:[a-z_]\\w*\\.)+[A-Z]\\w*(?:Exception|Error)\\b")
        .doesNotContain("\tat ");
  }

  static TlsConfig.Builder server(Path certificate, Path key, TlsProvider provider) {
    return TlsConfig.builder().keyCertChain(certificate, key).provider(provider);
  }

  // -------------------------------------------------------------------------------------------------
  // Mutual TLS

  @ParameterizedTest
  @MethodSource("providersAndProtocols")
  void mutualTlsGivesInboundMiddlewareTheClientsVerifiedIdentity(TlsProvider p, boolean h2)
      throws Exception {
    Server s = tlsServer(certs.serverConfig(ClientAuth.REQUIRE).provider(p).build());
    HttpOutbound out = client(certs.mutualClientConfig().provider(p).build(), s.https(), h2);

    assertThat(call(out, "hello")).isEqualTo("hello");

    RequestMeta m = s.nextCall();
    assertThat(m.transport()).isEqualTo(h2 ? "http2" : "http");
    ConnectionInfo c = m.connection();
    assertThat(c.isTls()).isTrue();
    assertThat(c.tlsProtocol()).isEqualTo("TLSv1.3");
    assertThat(c.hasPeerCertificate()).isTrue();
    assertThat(c.peerSubject()).isEqualTo("CN=test-client");
    assertThat(c.peerSubjectAlternativeNames())
        .contains("URI:spiffe://yarpc.test/client", "DNS:client.yarpc.test");
    assertThat(c.remoteHost()).isEqualTo("127.0.0.1");
    assertThat(((InetSocketAddress) c.localAddress()).getPort()).isEqualTo(s.port());

    // the connection's identity is made once and shared by its calls
    assertThat(call(out, "again")).isEqualTo("again");
    assertThat(s.nextCall().connection()).isSameAs(c);
  }

  @ParameterizedTest
  @MethodSource("providersAndProtocols")
  void mutualTlsRefusesAClientWithoutCertificate(TlsProvider p, boolean h2) throws Exception {
    Server s = tlsServer(certs.serverConfig(ClientAuth.REQUIRE).provider(p).build());
    HttpOutbound out = client(certs.clientConfig().provider(p).build(), s.https(), h2);

    YarpcException e = failure(out);
    assertHandshakeFailure(e, s.https());
    assertThat(e.getMessage()).containsIgnoringCase("certificate");
    assertThat(s.calls).isEmpty();
  }

  @ParameterizedTest
  @MethodSource("providers")
  void mutualTlsRefusesAClientCertificateFromAnUntrustedCa(TlsProvider p) throws Exception {
    Server s = tlsServer(certs.serverConfig(ClientAuth.REQUIRE).provider(p).build());
    TlsConfig intruder =
        certs
            .clientConfig()
            .keyCertChain(certs.untrustedClient().certificate(), certs.untrustedClient().key())
            .provider(p)
            .build();
    HttpOutbound out = client(intruder, s.https(), false);

    YarpcException e = failure(out);
    assertHandshakeFailure(e, s.https());
    assertThat(s.calls).isEmpty();
  }

  @ParameterizedTest
  @MethodSource("providers")
  void optionalClientAuthLeavesTheDecisionToMiddleware(TlsProvider p) throws Exception {
    // an authorizing middleware: only the SPIFFE ID of the test client may call
    Middleware<Request, Response> authorize =
        (request, next) -> {
          ConnectionInfo c = request.meta().connection();
          if (c == null
              || !c.peerSubjectAlternativeNames().contains("URI:spiffe://yarpc.test/client")) {
            request.body().release();
            return CompletableFuture.failedFuture(
                YarpcException.of(Code.PERMISSION_DENIED, "who are you?"));
          }
          return next.handle(request);
        };
    Server s =
        new Server(
            b ->
                b.tls(
                    certs.serverConfig(ClientAuth.OPTIONAL).provider(p).build(),
                    TlsMode.PERMISSIVE),
            authorize);

    HttpOutbound mutual = client(certs.mutualClientConfig().provider(p).build(), s.https(), false);
    assertThat(call(mutual, "ok")).isEqualTo("ok");
    assertThat(s.nextCall().connection().peerSubject()).isEqualTo("CN=test-client");

    HttpOutbound anonymous = client(certs.clientConfig().provider(p).build(), s.https(), false);
    YarpcException e = failure(anonymous);
    assertThat(e.code()).isEqualTo(Code.PERMISSION_DENIED);
    ConnectionInfo c = s.nextCall().connection();
    assertThat(c.isTls()).isTrue();
    assertThat(c.hasPeerCertificate()).isFalse();
    assertThat(c.peerSubject()).isEmpty();

    HttpOutbound plaintext = client(null, "127.0.0.1:" + s.port(), false);
    assertThat(failure(plaintext).code()).isEqualTo(Code.PERMISSION_DENIED);
    assertThat(s.nextCall().connection().isTls()).isFalse();
  }

  // -------------------------------------------------------------------------------------------------
  // What a client refuses

  @ParameterizedTest
  @MethodSource("providersAndProtocols")
  void aClientRefusesAnExpiredServerCertificate(TlsProvider p, boolean h2) throws Exception {
    TestCertificates.Pair expired = certs.expiredServer();
    Server s = tlsServer(server(expired.certificate(), expired.key(), p).build());
    HttpOutbound out = client(certs.clientConfig().provider(p).build(), s.https(), h2);

    YarpcException e = failure(out);
    assertHandshakeFailure(e, s.https());
    assertThat(e.getMessage()).contains("expired");
    assertThat(s.calls).isEmpty();
  }

  @ParameterizedTest
  @MethodSource("providers")
  void aClientRefusesAServerCertificateFromAnUntrustedCa(TlsProvider p) throws Exception {
    TestCertificates.Pair untrusted = certs.untrustedServer();
    Server s = tlsServer(server(untrusted.certificate(), untrusted.key(), p).build());
    HttpOutbound out = client(certs.clientConfig().provider(p).build(), s.https(), false);

    YarpcException e = failure(out);
    assertHandshakeFailure(e, s.https());
    assertThat(e.getMessage()).contains("not signed by a trusted root");
  }

  @ParameterizedTest
  @MethodSource("providers")
  void aClientRefusesAServerCertificateForAnotherName(TlsProvider p) throws Exception {
    Server s = tlsServer(certs.serverConfig(ClientAuth.NONE).provider(p).build());
    HttpOutbound out =
        client(
            certs.clientConfig().serverName("billing.example").provider(p).build(),
            s.https(),
            false);

    YarpcException e = failure(out);
    assertHandshakeFailure(e, s.https());
    assertThat(e.getMessage()).contains("does not name the server");
  }

  @Test
  void aClientVerifiesTheHostItConnectsToByName() throws Exception {
    Server s = tlsServer(certs.serverConfig(ClientAuth.NONE).build());
    HttpOutbound out =
        client(certs.clientConfig().build(), "https://localhost:" + s.port() + "/rpc", false);
    assertThat(call(out, "by name")).isEqualTo("by name");
  }

  @Test
  void withoutATlsConfigAClientTrustsTheJdkRootsOnly() throws Exception {
    Server s = tlsServer(certs.serverConfig(ClientAuth.NONE).build());
    HttpOutbound out = client(null, s.https(), false);

    YarpcException e = failure(out);
    assertHandshakeFailure(e, s.https());
    assertThat(e.getMessage()).contains("not signed by a trusted root");
  }

  @Test
  void aClientOfAPlaintextPortIsToldItIsNotTls() throws Exception {
    Server s = server(b -> {});
    HttpOutbound out = client(certs.clientConfig().build(), s.https(), false);

    YarpcException e = failure(out);
    assertHandshakeFailure(e, s.https());
    assertThat(e.getMessage()).contains("did not answer with TLS");
  }

  @Test
  void anHttp2ClientOfAnInboundWithoutHttp2IsToldWhy() throws Exception {
    Server s = server(b -> b.http2(false).tls(certs.serverConfig(ClientAuth.NONE).build()));
    HttpOutbound out = client(certs.clientConfig().build(), s.https(), true);

    YarpcException e = failure(out);
    assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(e.getMessage()).contains("did not agree to HTTP/2 over TLS");
    // HTTP/1.1 over the same port works
    assertThat(call(client(certs.clientConfig().build(), s.https(), false), "h1")).isEqualTo("h1");
  }

  @Test
  void aFailedHandshakeSendsThePeerBackToConnectingLikeAFailedConnect() throws Exception {
    TestCertificates.Pair expired = certs.expiredServer();
    Server s = tlsServer(server(expired.certificate(), expired.key(), TlsProvider.JDK).build());
    HttpTransport t =
        HttpTransport.builder()
            .eventLoopThreads(1)
            .tls(certs.clientConfig().build())
            .peerProbe(Duration.ofMillis(500), Duration.ofMillis(5), Duration.ofMillis(50))
            .build();
    HttpOutbound out = t.singleOutbound(s.https());
    out.start();
    List<ConnectionStatus> seen = new CopyOnWriteArrayList<>();
    PeerSubscriber watcher = peer -> seen.add(peer.status());
    Peer peer = t.retainPeer(s.https(), watcher);
    closers.add(
        () -> {
          t.releasePeer(s.https(), watcher);
          out.stop();
          t.stop();
        });
    for (int i = 0; i < 1000 && peer.status() != ConnectionStatus.AVAILABLE; i++) {
      Thread.sleep(10); // the TCP probe succeeds: the port is open
    }
    assertThat(peer.status()).isEqualTo(ConnectionStatus.AVAILABLE);
    seen.clear();

    assertThat(failure(out).getMessage()).contains("expired");
    for (int i = 0; i < 1000 && !seen.contains(ConnectionStatus.CONNECTING); i++) {
      Thread.sleep(10);
    }
    assertThat(seen).contains(ConnectionStatus.CONNECTING);
  }

  @Test
  void httpAndHttpsPeersOfOneAddressAreDifferentPeers() throws Exception {
    Server s = server(b -> b.tls(certs.serverConfig(ClientAuth.NONE).build(), TlsMode.PERMISSIVE));
    HttpTransport t =
        HttpTransport.builder().eventLoopThreads(1).tls(certs.clientConfig().build()).build();
    HttpOutbound plain = t.singleOutbound("http://127.0.0.1:" + s.port());
    HttpOutbound secure = t.singleOutbound(s.https());
    plain.start();
    secure.start();
    closers.add(
        () -> {
          plain.stop();
          secure.stop();
          t.stop();
        });

    assertThat(call(plain, "a")).isEqualTo("a");
    assertThat(s.nextCall().connection().isTls()).isFalse();
    assertThat(call(secure, "b")).isEqualTo("b");
    assertThat(s.nextCall().connection().isTls()).isTrue();
    assertThat(call(plain, "c")).isEqualTo("c");
    assertThat(s.nextCall().connection().isTls()).isFalse();
    assertThat(t.peers())
        .extracting(Peer::identifier)
        .containsExactlyInAnyOrder("127.0.0.1:" + s.port(), s.https());
  }

  // -------------------------------------------------------------------------------------------------
  // Permissive and enforced ports

  @ParameterizedTest
  @MethodSource("providers")
  void aPermissivePortServesPlaintextAndTlsClients(TlsProvider p) throws Exception {
    Server s =
        server(
            b ->
                b.tls(certs.serverConfig(ClientAuth.NONE).provider(p).build(), TlsMode.PERMISSIVE));
    for (boolean h2 : new boolean[] {false, true}) {
      HttpOutbound plain = client(null, "127.0.0.1:" + s.port(), h2);
      assertThat(call(plain, "plain")).isEqualTo("plain");
      RequestMeta m = s.nextCall();
      assertThat(m.transport()).isEqualTo(h2 ? "http2" : "http");
      assertThat(m.connection().isTls()).isFalse();
      assertThat(m.connection().remoteHost()).isEqualTo("127.0.0.1");

      HttpOutbound tls = client(certs.clientConfig().provider(p).build(), s.https(), h2);
      assertThat(call(tls, "tls")).isEqualTo("tls");
      m = s.nextCall();
      assertThat(m.transport()).isEqualTo(h2 ? "http2" : "http");
      assertThat(m.connection().isTls()).isTrue();
    }
  }

  @ParameterizedTest
  @MethodSource("providers")
  void anEnforcedPortAnswersAPlaintextHttp1ClientWith400AndCloses(TlsProvider p) throws Exception {
    Server s = tlsServer(certs.serverConfig(ClientAuth.NONE).provider(p).build());
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), s.port())) {
      socket.setSoTimeout(10_000);
      socket.getOutputStream().write((RawClient.request("echo", 2) + "hi").getBytes(UTF_8));
      assertThat(new String(readToEnd(socket.getInputStream()), UTF_8))
          .isEqualTo(
              "HTTP/1.1 400 Bad Request\r\n"
                  + "Content-Type: text/plain; charset=utf-8\r\n"
                  + "Content-Length: 23\r\n"
                  + "Connection: close\r\n"
                  + "\r\n"
                  + "this port requires TLS\n");
    }
    // our own plaintext outbound reads it as an error whose message says why
    YarpcException e = failure(client(null, "127.0.0.1:" + s.port(), false));
    assertThat(e.getMessage()).contains("this port requires TLS");
    assertThat(s.calls).isEmpty();
  }

  @Test
  void anEnforcedPortAnswersAnH2cClientWithGoAwayInadequateSecurity() throws Exception {
    Server s = tlsServer(certs.serverConfig(ClientAuth.NONE).build());
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), s.port())) {
      socket.setSoTimeout(10_000);
      ByteArrayOutputStream hello = new ByteArrayOutputStream();
      hello.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(UTF_8));
      hello.write(new byte[] {0, 0, 0, 4, 0, 0, 0, 0, 0}); // empty SETTINGS
      socket.getOutputStream().write(hello.toByteArray());
      byte[] answer = readToEnd(socket.getInputStream());
      // SETTINGS (empty), then GOAWAY(last stream 0, INADEQUATE_SECURITY = 0xc)
      assertThat(answer.length).isGreaterThanOrEqualTo(9 + 9 + 8);
      assertThat(answer[3]).as("first frame type").isEqualTo((byte) 4);
      assertThat(answer[9 + 3]).as("second frame type").isEqualTo((byte) 7);
      int code =
          ((answer[22] & 0xff) << 24)
              | ((answer[23] & 0xff) << 16)
              | ((answer[24] & 0xff) << 8)
              | (answer[25] & 0xff);
      assertThat(code).isEqualTo(0xc);
      assertThat(new String(answer, 26, answer.length - 26, UTF_8))
          .isEqualTo("this port requires TLS");
    }
    assertThat(s.calls).isEmpty();
  }

  @Test
  void aDisabledModeServesPlaintextOnly() throws Exception {
    Server s = server(b -> b.tls(certs.serverConfig(ClientAuth.NONE).build(), TlsMode.DISABLED));
    assertThat(call(client(null, "127.0.0.1:" + s.port(), false), "plain")).isEqualTo("plain");
    assertThat(s.nextCall().connection().isTls()).isFalse();
    assertThat(failure(client(certs.clientConfig().build(), s.https(), false)).code())
        .isEqualTo(Code.UNAVAILABLE);
  }

  @Test
  void anInboundNeedsACertificateForTls() {
    HttpTransport t = HttpTransport.create();
    TlsConfig clientOnly = certs.clientConfig().build();
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> t.inboundBuilder().tls(clientOnly))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("the HTTP inbound");
    // ignored when disabled
    t.inboundBuilder().tls(clientOnly, TlsMode.DISABLED).build();
  }

  @Test
  void aTlsClientWithoutAlpnIsServedHttp11() throws Exception {
    Server s = tlsServer(certs.serverConfig(ClientAuth.NONE).build());
    try (SSLSocket socket =
        TlsTesting.connect(TlsTesting.trusting(certs.caCertificate()), s.port(), new String[0])) {
      assertThat(socket.getApplicationProtocol()).isEmpty();
      RawClient c = new RawClient(socket);
      assertThat(c.send(RawClient.request("echo", 2) + "ok").read().body()).isEqualTo("ok");
      assertThat(s.nextCall().transport()).isEqualTo("http");
    }
  }

  @ParameterizedTest
  @MethodSource("providersAndProtocols")
  void aRequestTheInboundRejectsIsAnsweredOverTls(TlsProvider p, boolean h2) throws Exception {
    Server s =
        server(
            b ->
                b.limits(InboundLimits.builder().maxRequestSize(16).build())
                    .tls(certs.serverConfig(ClientAuth.NONE).provider(p).build()));
    HttpOutbound out = client(certs.clientConfig().provider(p).build(), s.https(), h2);
    CompletableFuture<Response> f = out.call(Request.of(meta(), Body.of(new byte[64 << 10])));
    try {
      f.get(20, TimeUnit.SECONDS).body().release();
      fail("a body over maxRequestSize was served");
    } catch (ExecutionException e) {
      YarpcException ye = YarpcException.from(e.getCause());
      if (ye.response() != null) {
        ye.response().body().release();
      }
      assertThat(ye.code()).isEqualTo(Code.RESOURCE_EXHAUSTED);
    }
    assertThat(call(out, "small")).isEqualTo("small");
  }

  // -------------------------------------------------------------------------------------------------
  // Rotation

  @ParameterizedTest
  @MethodSource("providers")
  void newConnectionsGetARotatedCertificateWhileOpenOnesKeepWorking(
      TlsProvider p, @TempDir Path live) throws Exception {
    Path cert = live.resolve("live.pem");
    Path key = live.resolve("live.key");
    Files.copy(certs.server().certificate(), cert);
    Files.copy(certs.server().key(), key);
    BigInteger before = TlsTesting.serial(cert);
    TlsConfig config = server(cert, key, p).reloadCheckInterval(Duration.ofMillis(10)).build();
    Server s = tlsServer(config);
    SSLSocketFactory raw = TlsTesting.trusting(certs.caCertificate());

    // opened before the rotation: an HTTP/1.1 keep-alive connection, and our h2 outbound's
    // connection
    SSLSocket keptSocket = TlsTesting.connect(raw, s.port());
    RawClient kept = new RawClient(keptSocket);
    closers.add(kept);
    assertThat(TlsTesting.serverSerial(keptSocket)).isEqualTo(before);
    assertThat(kept.send(RawClient.request("echo", 1) + "a").read().body()).isEqualTo("a");
    HttpOutbound h2 = client(certs.clientConfig().provider(p).build(), s.https(), true);
    assertThat(call(h2, "h2")).isEqualTo("h2");
    s.calls.clear();

    TestCertificates.Pair next =
        certs.issue("rotated-" + p, "localhost", "DNS:localhost,IP:127.0.0.1");
    BigInteger after = TlsTesting.serial(next.certificate());
    assertThat(after).isNotEqualTo(before);
    replace(next.key(), key);
    replace(next.certificate(), cert);

    BigInteger seen = before;
    for (int i = 0; i < 500 && !seen.equals(after); i++) {
      Thread.sleep(20);
      try (SSLSocket fresh = TlsTesting.connect(raw, s.port())) {
        seen = TlsTesting.serverSerial(fresh);
      }
    }
    assertThat(seen).as("a new connection's certificate").isEqualTo(after);

    // the connections opened before keep their session and keep working
    assertThat(kept.send(RawClient.request("echo", 1) + "b").read().body()).isEqualTo("b");
    assertThat(TlsTesting.serverSerial(keptSocket)).isEqualTo(before);
    RequestMeta keptCall = s.nextCall();
    assertThat(serverCertificateSerial(keptCall.connection())).isEqualTo(before);

    assertThat(call(h2, "h2 again")).isEqualTo("h2 again");
    RequestMeta h2Call = s.nextCall();
    assertThat(h2Call.transport()).isEqualTo("http2");
    assertThat(serverCertificateSerial(h2Call.connection())).isEqualTo(before);

    // and a new client connection gets the new certificate
    assertThat(call(client(certs.clientConfig().provider(p).build(), s.https(), false), "new"))
        .isEqualTo("new");
    assertThat(serverCertificateSerial(s.nextCall().connection())).isEqualTo(after);
  }

  @Test
  void reloadTakesNewFilesWithoutWaitingForTheCheck(@TempDir Path live) throws Exception {
    Path cert = live.resolve("live.pem");
    Path key = live.resolve("live.key");
    Files.copy(certs.server().certificate(), cert);
    Files.copy(certs.server().key(), key);
    BigInteger before = TlsTesting.serial(cert);
    TlsConfig config =
        server(cert, key, TlsProvider.JDK).reloadCheckInterval(Duration.ZERO).build();
    Server s = tlsServer(config);
    SSLSocketFactory raw = TlsTesting.trusting(certs.caCertificate());

    TestCertificates.Pair next = certs.issue("reloaded", "localhost", "DNS:localhost,IP:127.0.0.1");
    replace(next.key(), key);
    replace(next.certificate(), cert);
    try (SSLSocket fresh = TlsTesting.connect(raw, s.port())) {
      assertThat(TlsTesting.serverSerial(fresh)).as("no check, no reload yet").isEqualTo(before);
    }

    config.reload();
    try (SSLSocket fresh = TlsTesting.connect(raw, s.port())) {
      assertThat(TlsTesting.serverSerial(fresh)).isEqualTo(TlsTesting.serial(next.certificate()));
    }
  }

  private static void replace(Path from, Path to) throws Exception {
    Path tmp = to.resolveSibling(to.getFileName() + ".tmp");
    Files.copy(from, tmp, StandardCopyOption.REPLACE_EXISTING);
    Files.move(tmp, to, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  private static BigInteger serverCertificateSerial(ConnectionInfo c) {
    return ((X509Certificate) c.sslSession().getLocalCertificates()[0]).getSerialNumber();
  }

  // -------------------------------------------------------------------------------------------------
  // Limits over TLS

  @Test
  void theHandshakeTimeoutBoundsTheTlsHandshakeAndTheFirstRequest() throws Exception {
    // long enough for any handshake on a busy machine: the second client must get through its own
    Server s =
        server(
            b ->
                b.limits(InboundLimits.builder().handshakeTimeout(Duration.ofSeconds(2)).build())
                    .tls(certs.serverConfig(ClientAuth.NONE).build()));
    // a TLS record header and nothing more
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), s.port())) {
      socket.setSoTimeout(10_000);
      socket.getOutputStream().write(new byte[] {0x16, 0x03, 0x01, 0x00, 0x40});
      readToEnd(socket.getInputStream()); // the server closes it (a read timeout would throw)
    }
    // a finished TLS handshake, and no request: closed without an answer
    try (SSLSocket socket =
        TlsTesting.connect(TlsTesting.trusting(certs.caCertificate()), s.port())) {
      assertThat(readToEnd(socket.getInputStream())).isEmpty();
    }
  }

  @ParameterizedTest
  @MethodSource("providers")
  void maxConnectionsCountsTlsConnections(TlsProvider p) throws Exception {
    Server s =
        server(
            b ->
                b.limits(InboundLimits.builder().maxConnections(1).build())
                    .tls(certs.serverConfig(ClientAuth.NONE).provider(p).build()));
    SSLSocketFactory raw = TlsTesting.trusting(certs.caCertificate());
    try (SSLSocket first = TlsTesting.connect(raw, s.port())) {
      RawClient c = new RawClient(first);
      assertThat(c.send(RawClient.request("echo", 1) + "a").read().body()).isEqualTo("a");
      try {
        TlsTesting.connect(raw, s.port()).close();
        fail("a second connection was served");
      } catch (SSLException | SocketException expected) {
        // closed before its handshake
      }
      assertThat(s.inbound.refusedConnections()).isEqualTo(1);
    }
  }

  @Test
  void anIdleTlsConnectionIsClosed() throws Exception {
    Server s =
        server(
            b ->
                b.limits(InboundLimits.builder().idleTimeout(Duration.ofSeconds(2)).build())
                    .tls(certs.serverConfig(ClientAuth.NONE).build()));
    try (SSLSocket socket =
        TlsTesting.connect(TlsTesting.trusting(certs.caCertificate()), s.port())) {
      RawClient c = new RawClient(socket);
      assertThat(c.send(RawClient.request("echo", 1) + "a").read().body()).isEqualTo("a");
      assertThat(c.closedByServer()).isTrue();
    }
  }

  /** Everything until the server closes (end of stream or reset). */
  static byte[] readToEnd(InputStream in) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] buf = new byte[4096];
    try {
      for (int n; (n = in.read(buf)) >= 0; ) {
        out.write(buf, 0, n);
      }
    } catch (SocketException | SSLException reset) {
      // closed
    }
    return out.toByteArray();
  }
}
