package io.yarpc.transport.grpc;

import static io.yarpc.transport.grpc.EchoSupport.BIDI;
import static io.yarpc.transport.grpc.EchoSupport.UNARY;
import static io.yarpc.transport.grpc.EchoSupport.WAIT_SECONDS;
import static io.yarpc.transport.grpc.EchoSupport.body;
import static io.yarpc.transport.grpc.EchoSupport.req;
import static io.yarpc.transport.grpc.EchoSupport.request;
import static io.yarpc.transport.grpc.EchoSupport.resp;
import static io.yarpc.transport.grpc.EchoSupport.response;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ChannelCredentials;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import io.yarpc.ClientConfig;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.peer.SinglePeerChooser;
import io.yarpc.testing.TestCertificates;
import io.yarpc.tls.ClientAuth;
import io.yarpc.tls.TlsConfig;
import io.yarpc.tls.TlsMode;
import io.yarpc.tls.TlsProvider;
import io.yarpc.transport.ClientStream;
import io.yarpc.transport.ConnectionInfo;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.InboundLimits;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.StreamMessage;
import io.yarpc.transport.grpc.testing.echo.EchoGrpc;
import io.yarpc.transport.grpc.testing.echo.EchoRequest;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigInteger;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;
import javax.net.ssl.SSLSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * TLS on the gRPC transport, over real sockets on loopback: the enforced and permissive inbound modes
 * with YARPC, plain grpc-java and openssl clients; mutual TLS and the identity inbound middleware sees;
 * what a client is told when the server's certificate or its own is not accepted; certificate rotation;
 * the inbound limits with TLS connections.
 */
class GrpcTlsTest {
  private static final String SERVER = "tls-server";
  private static final Path PYTHON = Path.of("/usr/bin/python3");

  @TempDir static Path dir;
  private static TestCertificates certs;

  private final Deque<AutoCloseable> resources = new ArrayDeque<>();
  private final BlockingQueue<ConnectionInfo> connections = new LinkedBlockingQueue<>();
  private final List<GrpcTransport> transports = new ArrayList<>();
  private GrpcInbound inbound;

  @BeforeAll
  static void certificates() {
    certs = TestCertificates.generate(dir);
  }

  @AfterEach
  void close() throws Exception {
    Exception first = null;
    while (!resources.isEmpty()) {
      try {
        resources.pop().close();
      } catch (Exception e) {
        if (first == null) {
          first = e;
        }
      }
    }
    if (first != null) {
      throw first;
    }
    for (GrpcTransport t : transports) {
      GrpcTestBed.eventually(
          "receive buffers released: " + t.receiveStats(),
          () -> t.receiveStats().outstanding() == 0);
    }
  }

  // ---- the modes

  @Test
  void enforcedServesYarpcAndPlainGrpcClientsOverTls() throws Exception {
    serve(b -> b.tls(certs.serverConfig(ClientAuth.NONE).build()));
    assertThat(inbound.tlsMode()).isEqualTo(TlsMode.ENFORCED);

    ClientConfig yarpc = client(certs.clientConfig().build(), false);
    assertThat(unary(yarpc, "hi")).isEqualTo("unary: hi");
    ConnectionInfo c = nextConnection();
    assertThat(c.isTls()).isTrue();
    assertThat(c.tlsProtocol()).isEqualTo("TLSv1.3");
    assertThat(c.hasPeerCertificate()).as("server-only TLS: no client identity").isFalse();
    assertThat(c.peerSubject()).isEmpty();
    assertThat(c.remoteHost()).isEqualTo("127.0.0.1");
    assertThat(((InetSocketAddress) c.localAddress()).getPort()).isEqualTo(inbound.port());

    assertThat(bidi(yarpc, "a", "b")).containsExactly("bidi: a", "bidi: b");
    assertThat(nextConnection()).as("a stream on the same connection: the same info").isSameAs(c);
    assertThat(unary(yarpc, "again")).isEqualTo("unary: again");
    assertThat(nextConnection()).as("one info per connection, not per call").isSameAs(c);

    ManagedChannel plain = plainChannel(trustingCredentials());
    assertThat(blocking(plain).unary(req("plain")).getMessage()).isEqualTo("unary: plain");
    ConnectionInfo p = nextConnection();
    assertThat(p.isTls()).isTrue();
    assertThat(p).as("another connection").isNotSameAs(c);
  }

  @Test
  void opensslNegotiatesH2AndVerifiesTheServer() throws Exception {
    serve(b -> b.tls(certs.serverConfig(ClientAuth.NONE).build()));
    Process p =
        new ProcessBuilder(
                "openssl",
                "s_client",
                "-connect",
                "127.0.0.1:" + inbound.port(),
                "-alpn",
                "h2",
                "-servername",
                "localhost",
                "-CAfile",
                certs.caCertificate().toString())
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("openssl s_client finished").isTrue();
    assertThat(out).contains("ALPN protocol: h2").contains("Verify return code: 0 (ok)");
  }

  @Test
  void enforcedRefusesPlaintextClients() throws Exception {
    serve(b -> b.tls(certs.serverConfig(ClientAuth.NONE).build()));

    // a plain grpc-java client without TLS
    ManagedChannel plaintext = plainChannel(null);
    StatusRuntimeException e =
        catchThrowableOfType(
            StatusRuntimeException.class, () -> blocking(plaintext).unary(req("x")));
    assertThat(e.getStatus().getCode()).as("%s", e.getStatus()).isEqualTo(Status.Code.UNAVAILABLE);

    // what it was sent: nothing; the connection is closed once its first bytes show plaintext
    for (String first : List.of("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "GET / HTTP/1.1\r\n\r\n")) {
      try (Socket s = new Socket(InetAddress.getLoopbackAddress(), inbound.port())) {
        s.setSoTimeout((int) TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
        s.getOutputStream().write(first.getBytes(StandardCharsets.US_ASCII));
        assertThat(s.getInputStream().readAllBytes()).as("answer to %s", first.trim()).isEmpty();
      }
    }

    // a YARPC outbound without TLS
    ClientConfig yarpc = client(null, true);
    YarpcException y = unaryFailure(yarpc);
    assertThat(y.code()).isEqualTo(Code.UNAVAILABLE);

    // nothing was held: the refused connections are closed, and TLS clients are served
    GrpcTestBed.eventually("refused connections closed", () -> inbound.openConnections() == 0);
    assertThat(unary(client(certs.clientConfig().build(), false), "after"))
        .isEqualTo("unary: after");
  }

  @Test
  void permissiveServesTlsAndPlaintextOnOnePort() throws Exception {
    serve(b -> b.tls(certs.serverConfig(ClientAuth.NONE).build(), TlsMode.PERMISSIVE));
    assertThat(inbound.tlsMode()).isEqualTo(TlsMode.PERMISSIVE);

    assertThat(blocking(plainChannel(null)).unary(req("clear")).getMessage())
        .isEqualTo("unary: clear");
    assertThat(nextConnection().isTls()).isFalse();
    assertThat(blocking(plainChannel(trustingCredentials())).unary(req("tls")).getMessage())
        .isEqualTo("unary: tls");
    assertThat(nextConnection().isTls()).isTrue();

    ClientConfig clear = client(null, false);
    ClientConfig tls = client(certs.clientConfig().build(), false);
    assertThat(unary(clear, "yarpc clear")).isEqualTo("unary: yarpc clear");
    assertThat(nextConnection().isTls()).isFalse();
    assertThat(bidi(tls, "yarpc tls")).containsExactly("bidi: yarpc tls");
    assertThat(nextConnection().isTls()).isTrue();
    assertThat(bidi(clear, "x")).containsExactly("bidi: x");
    assertThat(nextConnection().isTls()).isFalse();
  }

  @Test
  void disabledModeIgnoresTheConfig() throws Exception {
    serve(b -> b.tls(certs.serverConfig(ClientAuth.NONE).build(), TlsMode.DISABLED));
    assertThat(inbound.tlsMode()).isEqualTo(TlsMode.DISABLED);
    assertThat(unary(client(null, false), "clear")).isEqualTo("unary: clear");
    assertThat(nextConnection().isTls()).isFalse();
  }

  @Test
  void aServerConfigNeedsACertificate() {
    GrpcInbound.Builder b = GrpcTransport.create().inboundBuilder(new InetSocketAddress(0));
    TlsConfig noCertificate = certs.clientConfig().build();
    assertThat(catchThrowableOfType(IllegalArgumentException.class, () -> b.tls(noCertificate)))
        .hasMessageContaining("needs a certificate and key");
    b.tls(noCertificate, TlsMode.DISABLED); // ignored: fine
  }

  // ---- mutual TLS

  @Test
  void mutualTlsGivesMiddlewareTheClientsIdentity() throws Exception {
    serve(b -> b.tls(certs.serverConfig(ClientAuth.REQUIRE).build()));
    ClientConfig yarpc = client(certs.mutualClientConfig().build(), false);

    assertThat(unary(yarpc, "who")).isEqualTo("unary: who");
    ConnectionInfo c = nextConnection();
    assertThat(c.hasPeerCertificate()).isTrue();
    assertThat(c.peerSubject()).isEqualTo("CN=test-client");
    assertThat(c.peerSubjectAlternativeNames())
        .contains("URI:spiffe://yarpc.test/client", "DNS:client.yarpc.test");
    assertThat(bidi(yarpc, "s")).containsExactly("bidi: s");
    ConnectionInfo s = nextConnection();
    assertThat(s.peerSubject()).as("streams see it too").isEqualTo("CN=test-client");

    ManagedChannel plain =
        plainChannel(
            TlsChannelCredentials.newBuilder()
                .trustManager(certs.caCertificate().toFile())
                .keyManager(certs.client().certificate().toFile(), certs.client().key().toFile())
                .build());
    assertThat(blocking(plain).unary(req("plain")).getMessage()).isEqualTo("unary: plain");
    assertThat(nextConnection().peerSubject()).isEqualTo("CN=test-client");
  }

  @ParameterizedTest
  @EnumSource(
      value = TlsProvider.class,
      names = {"JDK", "OPENSSL"})
  void mutualTlsRefusesClientsWithoutATrustedCertificate(TlsProvider provider) throws Exception {
    serve(b -> b.tls(certs.serverConfig(ClientAuth.REQUIRE).provider(provider).build()));
    String peer = "127.0.0.1:" + inbound.port();

    YarpcException none =
        unaryFailure(client(certs.clientConfig().provider(provider).build(), true));
    assertThat(none.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(none.getMessage()).startsWith("TLS handshake with peer " + peer + " failed: ");

    TlsConfig untrusted =
        certs
            .clientConfig()
            .keyCertChain(certs.untrustedClient().certificate(), certs.untrustedClient().key())
            .provider(provider)
            .build();
    YarpcException intruder = unaryFailure(client(untrusted, true));
    assertThat(intruder.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(intruder.getMessage()).startsWith("TLS handshake with peer " + peer + " failed: ");

    // a waiting chooser names the reason when the wait ends
    YarpcException waited =
        unaryFailure(
            client(certs.clientConfig().provider(provider).build(), false),
            Duration.ofMillis(1500));
    assertThat(waited.getMessage()).contains("peer " + peer).contains("TLS handshake failed: ");

    StatusRuntimeException plain =
        catchThrowableOfType(
            StatusRuntimeException.class,
            () -> blocking(plainChannel(trustingCredentials())).unary(req("x")));
    assertThat(plain.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);

    assertThat(connections).as("no call reached the handlers").isEmpty();
    assertThat(unary(client(certs.mutualClientConfig().provider(provider).build(), false), "ok"))
        .isEqualTo("unary: ok");
  }

  // ---- what a client is told

  @ParameterizedTest
  @EnumSource(
      value = TlsProvider.class,
      names = {"JDK", "OPENSSL"})
  void anExpiredServerCertificateIsUnavailableNamingTheReason(TlsProvider provider)
      throws Exception {
    serve(
        b ->
            b.tls(
                TlsConfig.builder()
                    .keyCertChain(certs.expiredServer().certificate(), certs.expiredServer().key())
                    .build()));
    TlsConfig config = certs.clientConfig().provider(provider).build();
    YarpcException e = unaryFailure(client(config, true));
    assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(e.getMessage())
        .startsWith("TLS handshake with peer 127.0.0.1:" + inbound.port() + " failed: ")
        .contains("expired");

    YarpcException waited = unaryFailure(client(config, false), Duration.ofMillis(1500));
    assertThat(waited.getMessage()).contains("TLS handshake failed: ").contains("expired");
  }

  @ParameterizedTest
  @EnumSource(
      value = TlsProvider.class,
      names = {"JDK", "OPENSSL"})
  void anUntrustedServerIsUnavailableNamingTheReason(TlsProvider provider) throws Exception {
    serve(
        b ->
            b.tls(
                TlsConfig.builder()
                    .keyCertChain(
                        certs.untrustedServer().certificate(), certs.untrustedServer().key())
                    .build()));
    YarpcException e = unaryFailure(client(certs.clientConfig().provider(provider).build(), true));
    assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(e.getMessage())
        .startsWith("TLS handshake with peer 127.0.0.1:" + inbound.port() + " failed: ")
        .contains("not signed by a trusted root");
  }

  @ParameterizedTest
  @EnumSource(
      value = TlsProvider.class,
      names = {"JDK", "OPENSSL"})
  void aServerCertificateForAnotherNameIsUnavailableUnlessVerificationIsOff(TlsProvider provider)
      throws Exception {
    serve(b -> b.tls(certs.serverConfig(ClientAuth.NONE).build()));
    TlsConfig.Builder wrongName =
        certs.clientConfig().serverName("wrong.example").provider(provider);
    YarpcException e = unaryFailure(client(wrongName.build(), true));
    assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(e.getMessage())
        .startsWith("TLS handshake with peer 127.0.0.1:" + inbound.port() + " failed: ")
        .contains("does not name the server");

    ClientConfig unchecked = client(wrongName.hostnameVerification(false).build(), false);
    assertThat(unary(unchecked, "any name")).isEqualTo("unary: any name");
    ClientConfig named =
        client(certs.clientConfig().serverName("localhost").provider(provider).build(), false);
    assertThat(unary(named, "by name")).isEqualTo("unary: by name");
  }

  @Test
  void aPlaintextServerIsUnavailableNamingTheReason() throws Exception {
    serve(b -> b);
    YarpcException e = unaryFailure(client(certs.clientConfig().build(), true));
    assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(e.getMessage())
        .startsWith("TLS handshake with peer 127.0.0.1:" + inbound.port() + " failed: ");
  }

  // ---- python grpcio

  @Test
  void pythonGrpcioCallsOverTlsAndMutualTls() throws Exception {
    boolean available =
        Files.isExecutable(PYTHON)
            && new ProcessBuilder(PYTHON.toString(), "-c", "import grpc").start().waitFor() == 0;
    if (System.getenv("YARPC_REQUIRE_PEERS") != null) {
      assertThat(available).as("python3-grpcio (apt-get install python3-grpcio)").isTrue();
    }
    Assumptions.assumeTrue(
        available, "python3-grpcio is not installed (apt-get install python3-grpcio)");
    String echoed = hex(resp("unary: python").toByteArray());

    serve(b -> b.tls(certs.serverConfig(ClientAuth.NONE).build()));
    JsonObject serverOnly = python(certs.caCertificate());
    assertThat(serverOnly.has("code")).as("%s", serverOnly).isFalse();
    assertThat(serverOnly.get("health").getAsString()).as("SERVING").isEqualTo("0801");
    assertThat(serverOnly.get("echo").getAsString()).isEqualTo(echoed);
    ConnectionInfo c = nextConnection();
    assertThat(c.isTls()).isTrue();
    assertThat(c.hasPeerCertificate()).isFalse();
    close();

    serve(b -> b.tls(certs.serverConfig(ClientAuth.REQUIRE).build()));
    JsonObject mutual =
        python(certs.caCertificate(), certs.client().certificate(), certs.client().key());
    assertThat(mutual.has("code")).as("%s", mutual).isFalse();
    assertThat(mutual.get("health").getAsString()).isEqualTo("0801");
    assertThat(mutual.get("echo").getAsString()).isEqualTo(echoed);
    ConnectionInfo m = nextConnection();
    assertThat(m.peerSubject()).isEqualTo("CN=test-client");
    assertThat(m.peerSubjectAlternativeNames()).contains("URI:spiffe://yarpc.test/client");

    JsonObject refused = python(certs.caCertificate());
    assertThat(refused.has("code")).as("%s", refused).isTrue();
    assertThat(refused.get("code").getAsString()).isEqualTo("UNAVAILABLE");
    assertThat(connections).isEmpty();
  }

  private JsonObject python(Path... files) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(PYTHON.toString());
    command.add("src/test/python/tls_client.py");
    command.add("127.0.0.1:" + inbound.port());
    for (Path f : files) {
      command.add(f.toString());
    }
    Process p =
        new ProcessBuilder(command)
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
            .start();
    CompletableFuture<byte[]> err =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return p.getErrorStream().readAllBytes();
              } catch (IOException e) {
                return new byte[0];
              }
            });
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("python client finished").isTrue();
    assertThat(p.exitValue())
        .as("stderr: %s", new String(err.get(), StandardCharsets.UTF_8))
        .isZero();
    return JsonParser.parseString(out).getAsJsonObject();
  }

  private static String hex(byte[] bytes) {
    StringBuilder s = new StringBuilder();
    for (byte b : bytes) {
      s.append(String.format("%02x", b));
    }
    return s.toString();
  }

  // ---- our outbound and a plain grpc-java server

  @Test
  void theOutboundCallsAPlainGrpcServerOverMutualTls() throws Exception {
    AtomicReference<SSLSession> session = new AtomicReference<>();
    io.grpc.Server server =
        Grpc.newServerBuilderForPort(
                0,
                io.grpc.TlsServerCredentials.newBuilder()
                    .keyManager(
                        certs.server().certificate().toFile(), certs.server().key().toFile())
                    .trustManager(certs.caCertificate().toFile())
                    .clientAuth(io.grpc.TlsServerCredentials.ClientAuth.REQUIRE)
                    .build())
            .addService(
                io.grpc.ServerInterceptors.intercept(
                    new PlainEchoUnary(),
                    new io.grpc.ServerInterceptor() {
                      @Override
                      public <Q, R> io.grpc.ServerCall.Listener<Q> interceptCall(
                          io.grpc.ServerCall<Q, R> call,
                          Metadata headers,
                          io.grpc.ServerCallHandler<Q, R> next) {
                        session.set(call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION));
                        return next.startCall(call, headers);
                      }
                    }))
            .build()
            .start();
    resources.push(() -> server.shutdownNow().awaitTermination(WAIT_SECONDS, TimeUnit.SECONDS));

    ClientConfig yarpc = client(certs.mutualClientConfig().build(), false, server.getPort());
    assertThat(unary(yarpc, "to plain")).isEqualTo("plain: to plain");
    X509Certificate presented = (X509Certificate) session.get().getPeerCertificates()[0];
    assertThat(presented.getSubjectX500Principal().getName()).isEqualTo("CN=test-client");

    YarpcException noCertificate =
        unaryFailure(client(certs.clientConfig().build(), true, server.getPort()));
    assertThat(noCertificate.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(noCertificate.getMessage())
        .startsWith("TLS handshake with peer 127.0.0.1:" + server.getPort() + " failed: ");
  }

  // ---- rotation

  @Test
  void reloadedCertificatesServeNewConnectionsAndOpenOnesKeepTheirs(@TempDir Path files)
      throws Exception {
    Path cert = files.resolve("server.pem");
    Path key = files.resolve("server.key");
    Files.copy(certs.server().certificate(), cert);
    Files.copy(certs.server().key(), key);
    TlsConfig config =
        TlsConfig.builder().keyCertChain(cert, key).reloadCheckInterval(Duration.ZERO).build();
    serve(b -> b.tls(config));
    BigInteger oldSerial = serial(certs.server().certificate());

    ClientConfig before = client(certs.clientConfig().build(), false);
    assertThat(unary(before, "before")).isEqualTo("unary: before");
    assertThat(localSerial(nextConnection())).isEqualTo(oldSerial);
    assertThat(serialSeenBy(plainChannel(trustingCredentials()))).isEqualTo(oldSerial);
    nextConnection();

    TestCertificates.Pair rotated =
        certs.issue("rotated-server", "localhost", "DNS:localhost,IP:127.0.0.1");
    Files.copy(rotated.certificate(), cert, StandardCopyOption.REPLACE_EXISTING);
    Files.copy(rotated.key(), key, StandardCopyOption.REPLACE_EXISTING);
    config.reload();
    BigInteger newSerial = serial(rotated.certificate());
    assertThat(newSerial).isNotEqualTo(oldSerial);

    assertThat(serialSeenBy(plainChannel(trustingCredentials())))
        .as("a new connection gets the new certificate")
        .isEqualTo(newSerial);
    nextConnection();
    assertThat(unary(before, "still")).isEqualTo("unary: still");
    assertThat(localSerial(nextConnection()))
        .as("the connection made before keeps its session")
        .isEqualTo(oldSerial);
    ClientConfig after = client(certs.clientConfig().build(), false);
    assertThat(unary(after, "after")).isEqualTo("unary: after");
    assertThat(localSerial(nextConnection())).isEqualTo(newSerial);
  }

  // ---- limits

  @Test
  void connectionLimitAndHandshakeTimeoutHoldForTls() throws Exception {
    serve(
        b ->
            b.tls(certs.serverConfig(ClientAuth.NONE).build())
                .limits(
                    InboundLimits.builder()
                        .maxConnections(2)
                        .handshakeTimeout(Duration.ofSeconds(1))
                        .build()));
    try (Socket stalled = new Socket(InetAddress.getLoopbackAddress(), inbound.port());
        Socket silent = new Socket(InetAddress.getLoopbackAddress(), inbound.port())) {
      stalled.getOutputStream().write(new byte[] {0x16, 3, 1}); // a TLS record that never completes
      GrpcTestBed.eventually("2 connections", () -> inbound.openConnections() == 2);
      try (Socket refused = new Socket(InetAddress.getLoopbackAddress(), inbound.port())) {
        assertThat(endOf(refused)).as("beyond the limit: closed at once").isTrue();
      }
      assertThat(inbound.refusedConnections()).isEqualTo(1);
      assertThat(endOf(stalled)).as("closed after the handshake timeout").isTrue();
      assertThat(endOf(silent)).as("closed after the handshake timeout").isTrue();
    }
    GrpcTestBed.eventually("connections closed", () -> inbound.openConnections() == 0);
    assertThat(unary(client(certs.clientConfig().build(), false), "ok")).isEqualTo("unary: ok");
  }

  // ---- helpers

  /** Starts a server dispatcher whose inbound is made with {@code options}. */
  private void serve(UnaryOperator<GrpcInbound.Builder> options) {
    GrpcTransport transport = GrpcTransport.create();
    transports.add(transport);
    inbound =
        options.apply(transport.inboundBuilder(new InetSocketAddress("127.0.0.1", 0))).build();
    Dispatcher server =
        Dispatcher.builder(SERVER)
            .inbound(inbound)
            .unaryInboundMiddleware(
                (request, next) -> {
                  connections.add(request.meta().connection());
                  return next.handle(request);
                })
            .streamInboundMiddleware(
                (stream, next) -> {
                  connections.add(stream.meta().connection());
                  return next.handle(stream);
                })
            .build();
    server.register(procedures());
    server.start();
    resources.push(server::stop);
  }

  /** A YARPC client of the inbound, with TLS when {@code tls} is not null. */
  private ClientConfig client(TlsConfig tls, boolean failFast) {
    return client(tls, failFast, inbound.port());
  }

  private ClientConfig client(TlsConfig tls, boolean failFast, int port) {
    GrpcTransport transport =
        tls == null ? GrpcTransport.create() : GrpcTransport.builder().tls(tls).build();
    transports.add(transport);
    GrpcOutbound outbound =
        transport.outbound(
            SinglePeerChooser.builder(transport, "127.0.0.1:" + port).failFast(failFast).build());
    Dispatcher client =
        Dispatcher.builder("tls-client")
            .outbound(SERVER, Outbounds.builder().unary(outbound).stream(outbound).build())
            .build();
    client.start();
    resources.push(client::stop);
    return client.clientConfig(SERVER);
  }

  private static RequestMeta meta(String procedure, Duration timeout) {
    return RequestMeta.builder()
        .procedure(procedure)
        .encoding("proto")
        .deadline(Deadline.after(timeout))
        .build();
  }

  private static String unary(ClientConfig client, String message) throws Exception {
    Response r =
        client
            .call(Request.of(meta(UNARY, Duration.ofSeconds(WAIT_SECONDS)), body(req(message))))
            .get(WAIT_SECONDS, TimeUnit.SECONDS);
    try {
      return response(r.body()).getMessage();
    } finally {
      r.body().release();
    }
  }

  private static YarpcException unaryFailure(ClientConfig client) throws Exception {
    return unaryFailure(client, Duration.ofSeconds(WAIT_SECONDS));
  }

  private static YarpcException unaryFailure(ClientConfig client, Duration timeout)
      throws Exception {
    YarpcException e =
        GrpcTestBed.failure(client.call(Request.of(meta(UNARY, timeout), body(req("refused")))));
    assertThat(e.getMessage())
        .as("no class names: the text may travel on")
        .doesNotContainPattern("[a-z]\\.[a-z]+\\.[A-Za-z.]*(Exception|Error)");
    return e;
  }

  private static List<String> bidi(ClientConfig client, String... messages) throws Exception {
    ClientStream stream =
        client
            .callStream(RequestMeta.builder().procedure(BIDI).encoding("proto").build())
            .get(WAIT_SECONDS, TimeUnit.SECONDS);
    List<String> out = new ArrayList<>();
    for (String m : messages) {
      stream.send(StreamMessage.of(body(req(m)))).get(WAIT_SECONDS, TimeUnit.SECONDS);
      StreamMessage reply = stream.receive().get(WAIT_SECONDS, TimeUnit.SECONDS);
      try {
        out.add(response(reply.body()).getMessage());
      } finally {
        reply.release();
      }
    }
    stream.halfClose();
    assertThat(stream.receive().get(WAIT_SECONDS, TimeUnit.SECONDS)).isNull();
    return out;
  }

  private ConnectionInfo nextConnection() throws InterruptedException {
    ConnectionInfo c = connections.poll(WAIT_SECONDS, TimeUnit.SECONDS);
    assertThat(c).as("a call reached the inbound middleware").isNotNull();
    return c;
  }

  /** A plain grpc-java channel (no YARPC interceptor) to the inbound; plaintext when null. */
  private ManagedChannel plainChannel(ChannelCredentials credentials) {
    ManagedChannel channel =
        credentials == null
            ? EchoSupport.plainChannel(inbound.port())
            : Grpc.newChannelBuilderForAddress("127.0.0.1", inbound.port(), credentials).build();
    resources.push(() -> EchoSupport.shutdown(channel));
    return channel;
  }

  private static ChannelCredentials trustingCredentials() throws IOException {
    return TlsChannelCredentials.newBuilder().trustManager(certs.caCertificate().toFile()).build();
  }

  private static EchoGrpc.EchoBlockingStub blocking(Channel channel) {
    return EchoGrpc.newBlockingStub(channel).withDeadlineAfter(WAIT_SECONDS, TimeUnit.SECONDS);
  }

  /** The serial of the certificate the server presented to a call on {@code channel}. */
  private static BigInteger serialSeenBy(ManagedChannel channel) throws Exception {
    AtomicReference<SSLSession> session = new AtomicReference<>();
    ClientInterceptor capture =
        new ClientInterceptor() {
          @Override
          public <Q, R> ClientCall<Q, R> interceptCall(
              MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
            ClientCall<Q, R> call = next.newCall(method, options);
            return new ForwardingClientCall.SimpleForwardingClientCall<>(call) {
              @Override
              public void start(Listener<R> listener, Metadata headers) {
                super.start(
                    new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(
                        listener) {
                      @Override
                      public void onHeaders(Metadata h) {
                        session.set(call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION));
                        super.onHeaders(h);
                      }
                    },
                    headers);
              }
            };
          }
        };
    assertThat(blocking(channel).withInterceptors(capture).unary(req("serial")).getMessage())
        .isEqualTo("unary: serial");
    return ((X509Certificate) session.get().getPeerCertificates()[0]).getSerialNumber();
  }

  private static BigInteger localSerial(ConnectionInfo c) {
    return ((X509Certificate) c.sslSession().getLocalCertificates()[0]).getSerialNumber();
  }

  private static BigInteger serial(Path pem) throws Exception {
    try (InputStream in = Files.newInputStream(pem)) {
      return ((X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in))
          .getSerialNumber();
    }
  }

  /** Whether the server closes {@code s} (reads until the end; nothing is expected). */
  private static boolean endOf(Socket s) throws IOException {
    s.setSoTimeout((int) TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
    try {
      return s.getInputStream().read() == -1;
    } catch (java.net.SocketException reset) {
      return true; // closed with unread bytes: a reset
    }
  }

  private static List<Procedure> procedures() {
    return List.of(
        Procedure.builder(UNARY)
            .encoding("proto")
            .unary(
                r -> {
                  try {
                    return CompletableFuture.completedFuture(
                        Response.of(body(resp("unary: " + request(r.body()).getMessage()))));
                  } catch (Exception e) {
                    return CompletableFuture.failedFuture(e);
                  }
                })
            .build(),
        Procedure.builder(BIDI)
            .encoding("proto")
            .streaming(
                stream -> {
                  CompletableFuture<Void> done = new CompletableFuture<>();
                  echo(stream, done);
                  return done;
                })
            .build());
  }

  /** Answers each message of {@code stream} until its end, without blocking. */
  private static void echo(io.yarpc.transport.ServerStream stream, CompletableFuture<Void> done) {
    stream
        .receive()
        .whenComplete(
            (m, e) -> {
              if (e != null) {
                done.completeExceptionally(e);
                return;
              }
              if (m == null) {
                done.complete(null);
                return;
              }
              String text;
              try {
                text = request(m.body()).getMessage();
              } catch (Exception parse) {
                done.completeExceptionally(parse);
                return;
              } finally {
                m.release();
              }
              stream
                  .send(StreamMessage.of(body(resp("bidi: " + text))))
                  .whenComplete(
                      (v, se) -> {
                        if (se != null) {
                          done.completeExceptionally(se);
                        } else {
                          echo(stream, done);
                        }
                      });
            });
  }

  /** A stock grpc-java Echo service's unary method. */
  private static final class PlainEchoUnary extends EchoGrpc.EchoImplBase {
    @Override
    public void unary(
        EchoRequest request,
        io.grpc.stub.StreamObserver<io.yarpc.transport.grpc.testing.echo.EchoResponse> observer) {
      observer.onNext(resp("plain: " + request.getMessage()));
      observer.onCompleted();
    }
  }
}
