package io.yarpc.transport.tchannel;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.google.gson.JsonObject;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.JdkSslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import io.yarpc.ClientConfig;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.peer.SinglePeerChooser;
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
import io.yarpc.transport.tchannel.internal.Connection;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigInteger;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * TLS on the TChannel transport, over real sockets on loopback: what the inbound tells handlers about the
 * connection, permissive and enforced ports, mutual TLS, the errors a client gets for a bad server
 * certificate, certificate rotation, and clients that misbehave before or during the TLS handshake.
 * Waits only guard against hangs; nothing asserts on elapsed time. Both sides use the JDK's TLS here,
 * OpenSSL in {@link TChannelTlsOpenSslTest}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TChannelTlsTest {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final String SERVICE = "tls-server";

  @TempDir static Path dir;
  private static TestCertificates certs;
  private static TestCertificates.Pair elsewhere; // a server certificate naming only elsewhere.test

  private final List<Runnable> cleanup = new ArrayList<>();
  private final AtomicReference<ConnectionInfo> seen = new AtomicReference<>();
  private long unexpectedBefore;

  @BeforeAll
  static void pki() {
    certs = TestCertificates.generate(dir);
    elsewhere = certs.issue("elsewhere", "elsewhere.test", "DNS:elsewhere.test");
  }

  @BeforeEach
  void countFailures() {
    unexpectedBefore = Connection.unexpectedFailures();
  }

  @AfterEach
  void stop() {
    for (int i = cleanup.size() - 1; i >= 0; i--) {
      cleanup.get(i).run();
    }
    assertThat(Connection.unexpectedFailures())
        .as("connections closed for reasons no rule explains")
        .isEqualTo(unexpectedBefore);
  }

  // ---------------------------------------------------------------------------------------------------
  // What the handler sees

  @Test
  void aTlsCallCarriesItsSessionAndNoClientIdentity() throws Exception {
    TChannelInbound inbound = server(serverConfig(ClientAuth.NONE).build(), TlsMode.ENFORCED);
    assertThat(inbound.tlsMode()).isEqualTo(TlsMode.ENFORCED);
    TChannelOutbound out = outbound(client(clientConfig().build()), inbound.hostPort());

    assertThat(echo(out, "over tls")).isEqualTo("over tls");
    ConnectionInfo info = seen.get();
    assertThat(info.isTls()).isTrue();
    assertThat(info.tlsProtocol()).startsWith("TLSv1.");
    assertThat(info.hasPeerCertificate()).isFalse();
    assertThat(info.peerSubject()).isEmpty();
    assertThat(info.remoteHost()).isEqualTo("127.0.0.1");
    assertThat(info.localAddress()).isEqualTo(inbound.address());
  }

  @Test
  void aPlaintextCallCarriesItsAddresses() throws Exception {
    TChannelInbound inbound = server(null, TlsMode.DISABLED);
    assertThat(inbound.tlsMode()).isEqualTo(TlsMode.DISABLED);
    TChannelTransport client = plaintextClient();
    TChannelOutbound out = outbound(client, inbound.hostPort());

    assertThat(echo(out, "plain")).isEqualTo("plain");
    ConnectionInfo info = seen.get();
    assertThat(info.isTls()).isFalse();
    assertThat(info.hasPeerCertificate()).isFalse();
    assertThat(info.localAddress()).isEqualTo(inbound.address());
    assertThat(info.remoteAddress())
        .isEqualTo(client.peer(inbound.hostPort()).connection().channel().localAddress());
  }

  @Test
  void mutualTlsGivesMiddlewareTheClientsVerifiedIdentity() throws Exception {
    TChannelInbound inbound = server(serverConfig(ClientAuth.REQUIRE).build(), TlsMode.ENFORCED);
    TChannelOutbound out = outbound(client(mutualClientConfig().build()), inbound.hostPort());

    assertThat(echo(out, "mutual")).isEqualTo("mutual");
    ConnectionInfo info = seen.get();
    assertThat(info.isTls()).isTrue();
    assertThat(info.hasPeerCertificate()).isTrue();
    assertThat(info.peerSubject()).isEqualTo("CN=test-client");
    assertThat(info.peerSubjectAlternativeNames()).contains("URI:spiffe://yarpc.test/client");
  }

  // ---------------------------------------------------------------------------------------------------
  // Mutual TLS: what a client without an acceptable certificate gets

  @Test
  void mutualTlsRefusesAClientWithoutCertificate() throws Exception {
    TChannelInbound inbound = server(serverConfig(ClientAuth.REQUIRE).build(), TlsMode.ENFORCED);
    TChannelTransport client = client(clientConfig().build());

    YarpcException e = failure(outbound(client, inbound.hostPort()));
    assertTlsFailure(e, inbound.hostPort(), "certificate");
    assertPeerReason(client, inbound.hostPort(), "certificate");
    assertThat(seen.get()).as("no call reached the handler").isNull();
    assertServes(inbound, mutualClientConfig().build());
  }

  @Test
  void mutualTlsRefusesAnUntrustedClientCertificate() throws Exception {
    TChannelInbound inbound = server(serverConfig(ClientAuth.REQUIRE).build(), TlsMode.ENFORCED);
    TlsConfig intruder =
        certs
            .clientConfig()
            .keyCertChain(certs.untrustedClient().certificate(), certs.untrustedClient().key())
            .build();
    TChannelTransport client = client(intruder);

    YarpcException e = failure(outbound(client, inbound.hostPort()));
    // the JDK presents the certificate and the server rejects it ("did not accept this side's
    // certificate"); OpenSSL presents none, since the server asked for its CA's ("requires a client
    // certificate")
    String reason =
        provider() == TlsProvider.JDK
            ? "the other side did not accept this side's certificate"
            : "the server requires a client certificate and none was presented";
    assertTlsFailure(e, inbound.hostPort(), reason);
    assertPeerReason(client, inbound.hostPort(), reason);
    assertThat(seen.get()).as("no call reached the handler").isNull();
    assertServes(inbound, mutualClientConfig().build());
  }

  // ---------------------------------------------------------------------------------------------------
  // The client's checks of the server

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"expired", "untrusted", "wrong name"})
  void aBadServerCertificateFailsCallsWithTheReason(String problem) throws Exception {
    TestCertificates.Pair pair;
    String reason;
    switch (problem) {
      case "expired":
        pair = certs.expiredServer();
        reason = "the certificate has expired";
        break;
      case "untrusted":
        pair = certs.untrustedServer();
        reason = "the certificate is not signed by a trusted root";
        break;
      default:
        pair = elsewhere;
        reason = "the certificate does not name the server";
    }
    TChannelInbound inbound =
        server(config().keyCertChain(pair.certificate(), pair.key()).build(), TlsMode.ENFORCED);
    TChannelTransport client = client(clientConfig().build());

    YarpcException e = failure(outbound(client, inbound.hostPort()));
    assertTlsFailure(e, inbound.hostPort(), reason);
    assertPeerReason(client, inbound.hostPort(), reason);
    assertThat(seen.get()).as("no call reached the handler").isNull();
  }

  @Test
  void aCallWaitingForThePeerEndsAtItsDeadlineNamingTheTlsReason() throws Exception {
    TChannelInbound inbound =
        server(
            config()
                .keyCertChain(certs.expiredServer().certificate(), certs.expiredServer().key())
                .build(),
            TlsMode.ENFORCED);
    TChannelTransport client = client(clientConfig().build());
    TChannelOutbound out = client.singleOutbound(inbound.hostPort()); // waits for the peer
    out.start();
    cleanup.add(out::stop);
    RequestMeta meta =
        request("x").meta().toBuilder().deadline(Deadline.after(Duration.ofSeconds(1))).build();
    ClientConfig config = ClientConfig.of("tls-client", SERVICE, Outbounds.unary(out));

    Throwable t =
        catchThrowable(
            () ->
                config
                    .call(Request.of(meta, Body.of(new byte[] {1})))
                    .get(WAIT.toMillis(), TimeUnit.MILLISECONDS));
    assertThat(t).isInstanceOf(ExecutionException.class);
    assertThat(t.getCause().getMessage())
        .contains(
            "peer "
                + inbound.hostPort()
                + " is unreachable: TLS handshake with peer "
                + inbound.hostPort()
                + " failed: the certificate has expired");
  }

  @Test
  void serverNameReplacesTheHostTheCertificateMustName() throws Exception {
    TChannelInbound inbound =
        server(
            config().keyCertChain(elsewhere.certificate(), elsewhere.key()).build(),
            TlsMode.ENFORCED);
    TChannelOutbound out =
        outbound(client(clientConfig().serverName("elsewhere.test").build()), inbound.hostPort());

    assertThat(echo(out, "by name")).isEqualTo("by name");
  }

  @Test
  void aTlsClientOfAPlaintextServerFailsWithTheReason() throws Exception {
    TChannelInbound inbound = server(null, TlsMode.DISABLED);
    // the plaintext server reads the ClientHello as the start of a 5.6 KB frame and waits for the
    // rest
    TChannelTransport client =
        client(
            TChannelTransport.builder()
                .serviceName("tls-client")
                .handshakeTimeout(Duration.ofMillis(300))
                .tls(clientConfig().build()));

    YarpcException e = failure(outbound(client, inbound.hostPort()));
    assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(e.getMessage())
        .startsWith("TLS handshake with peer " + inbound.hostPort() + " failed: ");
  }

  // ---------------------------------------------------------------------------------------------------
  // Permissive and enforced ports

  @Test
  void aPermissivePortServesPlaintextAndTlsClients() throws Exception {
    TChannelInbound inbound = server(serverConfig(ClientAuth.OPTIONAL).build(), TlsMode.PERMISSIVE);

    TChannelOutbound plain = outbound(plaintextClient(), inbound.hostPort());
    assertThat(echo(plain, "plain")).isEqualTo("plain");
    assertThat(seen.get().isTls()).isFalse();

    TChannelOutbound tls = outbound(client(clientConfig().build()), inbound.hostPort());
    assertThat(echo(tls, "tls")).isEqualTo("tls");
    assertThat(seen.get().isTls()).isTrue();
    assertThat(seen.get().hasPeerCertificate()).isFalse();

    TChannelOutbound mutual = outbound(client(mutualClientConfig().build()), inbound.hostPort());
    assertThat(echo(mutual, "mutual")).isEqualTo("mutual");
    assertThat(seen.get().peerSubject()).isEqualTo("CN=test-client");

    assertThat(echo(plain, "plain again")).isEqualTo("plain again");
    assertThat(inbound.acceptedConnections()).isEqualTo(3);
  }

  @Test
  void aPermissivePortServesATchannelNodeClient() throws Exception {
    NodePeer.assumeInstalled();
    TChannelInbound inbound = server(serverConfig(ClientAuth.NONE).build(), TlsMode.PERMISSIVE);
    try (NodePeer node = NodePeer.start("client.js", inbound.hostPort())) {
      JsonObject cmd = new JsonObject();
      cmd.addProperty("service", SERVICE);
      cmd.addProperty("endpoint", "echo");
      cmd.addProperty("as", "raw");
      cmd.addProperty("body", "from node");
      JsonObject answer = node.send(cmd).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
      assertThat(answer.has("error")).as("answer %s", answer).isFalse();
      assertThat(answer.get("ok").getAsBoolean()).isTrue();
      assertThat(
              new String(Base64.getDecoder().decode(answer.get("arg3Base64").getAsString()), UTF_8))
          .isEqualTo("from node");
    }
    assertThat(seen.get().isTls()).isFalse();
    assertServes(inbound, clientConfig().build());
  }

  /** tchannel-node: the call fails, as the connection closes; nothing reaches the handler. */
  @Test
  void anEnforcedPortRefusesATchannelNodeClient() throws Exception {
    NodePeer.assumeInstalled();
    TChannelInbound inbound = server(serverConfig(ClientAuth.NONE).build(), TlsMode.ENFORCED);
    try (NodePeer node = NodePeer.start("client.js", inbound.hostPort())) {
      JsonObject cmd = new JsonObject();
      cmd.addProperty("service", SERVICE);
      cmd.addProperty("endpoint", "echo");
      cmd.addProperty("as", "raw");
      cmd.addProperty("body", "from node");
      JsonObject answer = node.send(cmd).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
      // tchannel-node does not surface an error frame that answers its init req: it reports the
      // close
      assertThat(answer.has("error")).as("answer %s", answer).isTrue();
      assertThat(answer.getAsJsonObject("error").get("type").getAsString())
          .isEqualTo("tchannel.socket-closed");
    }
    assertThat(seen.get()).as("no call reached the handler").isNull();
    assertServes(inbound, clientConfig().build());
  }

  @Test
  void anEnforcedPortTellsAPlaintextOutboundThatTlsIsRequired() throws Exception {
    TChannelInbound inbound = server(serverConfig(ClientAuth.NONE).build(), TlsMode.ENFORCED);
    TChannelTransport client = plaintextClient();

    YarpcException e = failure(outbound(client, inbound.hostPort()));
    assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(e.getMessage()).contains("TLS is required on this port");
    assertPeerReason(client, inbound.hostPort(), "TLS is required on this port");
    assertThat(seen.get()).as("no call reached the handler").isNull();
    await(() -> inbound.acceptedConnections() == 0, "the refused connection closes");
    assertServes(inbound, clientConfig().build());
  }

  @Test
  void anEnforcedPortAnswersAPlaintextInitReqWithAFatalErrorFrame() throws Exception {
    TChannelInbound inbound = server(serverConfig(ClientAuth.NONE).build(), TlsMode.ENFORCED);
    try (SocketPeer peer = SocketPeer.connect(inbound.address())) {
      peer.write(Wire.initReq(7));
      peer.expectError(7, 0xFF, "TLS is required on this port");
      assertThat(peer.closedByPeer()).isTrue();
    }
  }

  @Test
  void anEnforcedPortClosesAnotherProtocolWithoutAnswer() throws Exception {
    TrackingAllocator alloc = new TrackingAllocator();
    TChannelInbound inbound =
        server(
            serverConfig(ClientAuth.NONE).build(),
            TlsMode.ENFORCED,
            InboundLimits.defaults(),
            alloc);
    try (Socket s = connect(inbound.address())) {
      s.getOutputStream().write("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(UTF_8));
      assertThat(readToEnd(s)).as("bytes the server sent").isZero();
    }
    await(() -> inbound.acceptedConnections() == 0, "the connection closes");
    alloc.awaitAllReleased(WAIT);
    assertServes(inbound, clientConfig().build());
  }

  @Test
  void inboundLimitsApplyToTlsConnections() throws Exception {
    TChannelInbound inbound =
        server(
            serverConfig(ClientAuth.NONE).build(),
            TlsMode.ENFORCED,
            InboundLimits.builder()
                .maxRequestSize(1024)
                // long enough that the connection stays through the three calls on a loaded machine
                .idleTimeout(Duration.ofSeconds(2))
                .build(),
            null);
    TChannelTransport client = client(clientConfig().build());
    TChannelOutbound out = outbound(client, inbound.hostPort());

    assertThat(echo(out, "small")).isEqualTo("small");
    Connection connection = client.peer(inbound.hostPort()).connection();
    YarpcException tooLarge = failure(out, new byte[4096]);
    assertThat(tooLarge.code()).as("a bad-request error frame").isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(echo(out, "small again")).isEqualTo("small again");
    assertThat(client.peer(inbound.hostPort()).connection())
        .as("the connection stayed")
        .isSameAs(connection);

    await(() -> !connection.isActive(), "the server closes the idle connection");
    await(() -> inbound.acceptedConnections() == 0, "the server forgets it");
  }

  // ---------------------------------------------------------------------------------------------------
  // Other clients

  @Test
  void opensslSClientCompletesTheHandshake() throws Exception {
    TChannelInbound inbound = server(serverConfig(ClientAuth.NONE).build(), TlsMode.ENFORCED);
    Process p =
        new ProcessBuilder(
                "openssl",
                "s_client",
                "-connect",
                "127.0.0.1:" + inbound.address().getPort(),
                "-CAfile",
                certs.caCertificate().toString())
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
            .redirectErrorStream(true)
            .start();
    String output = new String(p.getInputStream().readAllBytes(), UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(output).contains("Verify return code: 0 (ok)");
    assertThat(output).contains("subject=CN = localhost");
    await(() -> inbound.acceptedConnections() == 0, "s_client's connection closes");
    assertServes(inbound, clientConfig().build());
  }

  // ---------------------------------------------------------------------------------------------------
  // Rotation

  @Test
  void reloadingGivesNewConnectionsTheNewCertificateAndKeepsOpenOnes() throws Exception {
    Path cert = dir.resolve("rotating.pem");
    Path key = dir.resolve("rotating.key");
    Files.copy(certs.server().certificate(), cert, StandardCopyOption.REPLACE_EXISTING);
    Files.copy(certs.server().key(), key, StandardCopyOption.REPLACE_EXISTING);
    TlsConfig config = config().keyCertChain(cert, key).reloadCheckInterval(Duration.ZERO).build();
    TChannelInbound inbound = server(config, TlsMode.ENFORCED);

    TChannelTransport before = client(clientConfig().build());
    TChannelOutbound oldOut = outbound(before, inbound.hostPort());
    assertThat(echo(oldOut, "before")).isEqualTo("before");
    Connection oldConnection = before.peer(inbound.hostPort()).connection();
    assertThat(serverCertificate(before, inbound.hostPort()).getSerialNumber())
        .isEqualTo(serial(certs.server().certificate()));

    TestCertificates.Pair rotated =
        certs.issue("rotated", "localhost", "DNS:localhost,IP:127.0.0.1,IP:::1");
    Files.copy(rotated.certificate(), cert, StandardCopyOption.REPLACE_EXISTING);
    Files.copy(rotated.key(), key, StandardCopyOption.REPLACE_EXISTING);
    config.reload();

    TChannelTransport after = client(clientConfig().build());
    TChannelOutbound newOut = outbound(after, inbound.hostPort());
    assertThat(echo(newOut, "after")).isEqualTo("after");
    assertThat(serverCertificate(after, inbound.hostPort()).getSerialNumber())
        .isEqualTo(serial(rotated.certificate()));

    assertThat(echo(oldOut, "still")).isEqualTo("still");
    assertThat(before.peer(inbound.hostPort()).connection())
        .as("the connection opened before the rotation")
        .isSameAs(oldConnection);
    assertThat(serverCertificate(before, inbound.hostPort()).getSerialNumber())
        .isEqualTo(serial(certs.server().certificate()));
  }

  // ---------------------------------------------------------------------------------------------------
  // Misbehaving clients

  @Test
  void theHandshakeTimeoutClosesClientsStalledBeforeOrDuringTheTlsHandshake() throws Exception {
    TrackingAllocator alloc = new TrackingAllocator();
    TChannelInbound inbound =
        server(
            serverConfig(ClientAuth.NONE).build(),
            TlsMode.ENFORCED,
            InboundLimits.builder().handshakeTimeout(Duration.ofMillis(300)).build(),
            alloc);
    try (Socket silent = connect(inbound.address());
        Socket partialRecord = connect(inbound.address());
        Socket partialHello = connect(inbound.address())) {
      // silent: nothing at all, the front waits for a first byte
      // the first bytes of a TLS record header: the TLS handler waits for the rest
      partialRecord.getOutputStream().write(new byte[] {0x16, 0x03});
      // a whole record header announcing a ClientHello that never comes
      partialHello.getOutputStream().write(new byte[] {0x16, 0x03, 0x01, 0x01, 0x00, 0x01});

      assertThat(readToEnd(silent)).isZero();
      assertThat(readToEnd(partialRecord)).isZero();
      readToEnd(partialHello); // the TLS handler may send an alert before it closes
    }
    await(() -> inbound.acceptedConnections() == 0, "every stalled connection closes");
    alloc.awaitAllReleased(WAIT);
  }

  @Test
  void theHandshakeTimeoutCoversTheInitHandshakeAfterTls() throws Exception {
    TChannelInbound inbound =
        server(
            serverConfig(ClientAuth.NONE).build(),
            TlsMode.ENFORCED,
            InboundLimits.builder().handshakeTimeout(Duration.ofSeconds(2)).build(),
            null);
    assertServes(inbound, clientConfig().build()); // warm: the next handshake is quick
    try (SSLSocket noInit = tlsConnect(inbound.address())) {
      noInit.startHandshake(); // a complete TLS handshake, then no init req
      assertThat(noInit.getInputStream().read()).as("end of stream").isEqualTo(-1);
    }
    await(() -> inbound.acceptedConnections() == 1, "the stalled connection closes");
    assertServes(inbound, clientConfig().build());
  }

  @Test
  void garbageAfterTheTlsRecordTypeClosesTheConnectionWithoutLeaks() throws Exception {
    TrackingAllocator alloc = new TrackingAllocator();
    TChannelInbound inbound =
        server(
            serverConfig(ClientAuth.NONE).build(),
            TlsMode.PERMISSIVE,
            InboundLimits.defaults(),
            alloc);
    byte[] notARecord = new byte[300];
    notARecord[0] = 0x16;
    for (int i = 1; i < notARecord.length; i++) {
      notARecord[i] = (byte) (i * 31 + 7);
    }
    byte[] badHello = new byte[5 + 64];
    badHello[0] = 0x16;
    badHello[1] = 0x03;
    badHello[2] = 0x01;
    badHello[4] = 64;
    for (int i = 5; i < badHello.length; i++) {
      badHello[i] = (byte) (i * 17);
    }
    for (byte[] garbage : new byte[][] {notARecord, badHello}) {
      try (Socket s = connect(inbound.address())) {
        s.getOutputStream().write(garbage);
        readToEnd(s); // an alert, perhaps; then the end of the stream
      }
    }
    await(() -> inbound.acceptedConnections() == 0, "the connections close");
    alloc.awaitAllReleased(WAIT);
    assertServes(inbound, clientConfig().build());
    TChannelOutbound plain = outbound(plaintextClient(), inbound.hostPort());
    assertThat(echo(plain, "plain")).isEqualTo("plain");
  }

  // ---------------------------------------------------------------------------------------------------
  // Helpers

  /** The TLS implementation both sides use (the OpenSSL subclass runs every test again with OpenSSL). */
  protected TlsProvider provider() {
    return TlsProvider.JDK;
  }

  private TlsConfig.Builder config() {
    return TlsConfig.builder().provider(provider());
  }

  private TlsConfig.Builder serverConfig(ClientAuth clientAuth) {
    return certs.serverConfig(clientAuth).provider(provider());
  }

  private TlsConfig.Builder clientConfig() {
    return certs.clientConfig().provider(provider());
  }

  private TlsConfig.Builder mutualClientConfig() {
    return certs.mutualClientConfig().provider(provider());
  }

  private TChannelInbound server(TlsConfig tls, TlsMode mode) {
    return server(tls, mode, InboundLimits.defaults(), null);
  }

  /** A started server dispatcher with one TChannel inbound; its middleware records the connection. */
  private TChannelInbound server(
      TlsConfig tls, TlsMode mode, InboundLimits limits, ByteBufAllocator alloc) {
    TChannelTransport.Builder tb = TChannelTransport.builder().serviceName(SERVICE);
    if (alloc != null) {
      tb.allocator(alloc);
    }
    TChannelTransport transport = tb.build();
    TChannelInbound.Builder ib = transport.inboundBuilder().limits(limits);
    if (tls != null) {
      ib.tls(tls, mode);
    }
    TChannelInbound inbound = ib.build();
    Dispatcher d =
        Dispatcher.builder(SERVICE)
            .inbound(inbound)
            .unaryInboundMiddleware(
                (request, next) -> {
                  seen.set(request.meta().connection());
                  return next.handle(request);
                })
            .shutdownGracePeriod(Duration.ofMillis(500))
            .logLifecycle(false)
            .build();
    d.register(Raw.procedure("echo", body -> body));
    d.start();
    cleanup.add(
        () -> {
          d.stop();
          transport.stop();
        });
    return inbound;
  }

  private TChannelTransport client(TlsConfig tls) {
    TChannelTransport.Builder b = TChannelTransport.builder().serviceName("tls-client");
    if (tls != null) {
      b.tls(tls);
    }
    return client(b);
  }

  private TChannelTransport plaintextClient() {
    return client(TChannelTransport.builder().serviceName("tls-client"));
  }

  private TChannelTransport client(TChannelTransport.Builder b) {
    TChannelTransport t = b.build();
    t.start();
    cleanup.add(t::stop);
    return t;
  }

  /**
   * A fail-fast outbound to {@code hostPort}: a call made while the peer cannot be reached fails with the
   * transport's error at once instead of waiting for the peer until its deadline.
   */
  private TChannelOutbound outbound(TChannelTransport transport, String hostPort) {
    TChannelOutbound out =
        transport.outbound(SinglePeerChooser.builder(transport, hostPort).failFast(true).build());
    out.start();
    cleanup.add(out::stop);
    return out;
  }

  /** A new TLS client calls the inbound successfully. */
  private void assertServes(TChannelInbound inbound, TlsConfig clientTls) throws Exception {
    TChannelOutbound out = outbound(client(clientTls), inbound.hostPort());
    assertThat(echo(out, "still serving")).isEqualTo("still serving");
  }

  private static Request request(String text) {
    RequestMeta meta =
        RequestMeta.builder()
            .caller("tls-client")
            .service(SERVICE)
            .procedure("echo")
            .encoding("raw")
            .deadline(Deadline.after(WAIT))
            .build();
    return Request.of(meta, Body.of(text.getBytes(UTF_8)));
  }

  private static String echo(TChannelOutbound out, String text) throws Exception {
    Response r = out.call(request(text)).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    try {
      return new String(r.body().toByteArray(), UTF_8);
    } finally {
      r.body().release();
    }
  }

  private static YarpcException failure(TChannelOutbound out) throws Exception {
    return failure(out, new byte[] {'x'});
  }

  private static YarpcException failure(TChannelOutbound out, byte[] body) throws Exception {
    try {
      Request request = Request.of(request("x").meta(), Body.of(body));
      Response r = out.call(request).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
      r.body().release();
      throw new AssertionError("expected the call to fail");
    } catch (ExecutionException e) {
      assertThat(e.getCause()).isInstanceOf(YarpcException.class);
      return (YarpcException) e.getCause();
    }
  }

  private static void assertTlsFailure(YarpcException e, String hostPort, String reason) {
    assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(e.getMessage())
        .startsWith("TLS handshake with peer " + hostPort + " failed: ")
        .contains(reason)
        .doesNotContain("Exception");
  }

  /** The peer's reason for being unavailable (set as its dial ends) comes to name the TLS failure. */
  private static void assertPeerReason(TChannelTransport client, String hostPort, String reason)
      throws InterruptedException {
    await(
        () -> {
          String r = client.peer(hostPort).unavailableReason();
          return r != null && r.contains(reason);
        },
        "the peer's unavailable reason names \"" + reason + "\"");
  }

  private static X509Certificate serverCertificate(TChannelTransport client, String hostPort)
      throws Exception {
    SslHandler ssl = client.peer(hostPort).connection().channel().pipeline().get(SslHandler.class);
    return (X509Certificate) ssl.engine().getSession().getPeerCertificates()[0];
  }

  private static BigInteger serial(Path pem) throws Exception {
    try (InputStream in = Files.newInputStream(pem)) {
      return ((X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in))
          .getSerialNumber();
    }
  }

  private static Socket connect(InetSocketAddress address) throws IOException {
    Socket s = new Socket();
    s.connect(address, 10_000);
    s.setSoTimeout(10_000); // only a guard against hangs
    return s;
  }

  /** A TLS socket trusting the test CA (the handshake starts on first use). */
  private static SSLSocket tlsConnect(InetSocketAddress address) throws Exception {
    JdkSslContext context =
        (JdkSslContext)
            SslContextBuilder.forClient()
                .sslProvider(SslProvider.JDK)
                .trustManager(certs.caCertificate().toFile())
                .build();
    SSLSocket s =
        (SSLSocket)
            context
                .context()
                .getSocketFactory()
                .createSocket(address.getHostString(), address.getPort());
    s.setSoTimeout(10_000);
    return s;
  }

  /** Reads until the server closes the connection; returns how many bytes it sent before. */
  private static int readToEnd(Socket s) throws IOException {
    int count = 0;
    try {
      InputStream in = s.getInputStream();
      byte[] buf = new byte[1024];
      for (int n; (n = in.read(buf)) != -1; ) {
        count += n;
      }
    } catch (SocketException e) {
      // reset by the server: closed too
    }
    return count;
  }

  private static void await(BooleanSupplier condition, String what) throws InterruptedException {
    long giveUp = System.nanoTime() + WAIT.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > giveUp) {
        throw new AssertionError("gave up waiting until " + what);
      }
      Thread.sleep(5);
    }
  }
}
