package io.yarpc.transport.tchannel;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.ssl.SslHandler;
import io.yarpc.Dispatcher;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.testing.TestCertificates;
import io.yarpc.tls.ClientAuth;
import io.yarpc.tls.TlsConfig;
import io.yarpc.tls.TlsMode;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.tchannel.internal.Connection;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * When a connection another process dialled serves this side's calls to the {@code host_port} that
 * process advertised: only when its remote address or its verified client certificate backs the claim,
 * and, when this side's outbounds use TLS, only by certificate. Loopback has many addresses: a process
 * listening on {@code 127.0.0.2} still dials from {@code 127.0.0.1}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AdvertisedHostPortTest {
  private static final Duration WAIT = Duration.ofSeconds(10);

  @TempDir static Path dir;
  private static TestCertificates certs;
  private static TestCertificates.Pair at127002; // a client certificate naming IP 127.0.0.2

  private final List<Runnable> cleanup = new ArrayList<>();

  @BeforeAll
  static void pki() {
    certs = TestCertificates.generate(dir);
    at127002 = certs.issue("client-127-0-0-2", "process-a", "IP:127.0.0.2");
  }

  @AfterEach
  void stop() {
    for (int i = cleanup.size() - 1; i >= 0; i--) {
      cleanup.get(i).run();
    }
  }

  /** A raw peer that claims another server's {@code host_port} does not get the calls meant for it. */
  @Test
  void aClaimNotBackedByTheRemoteAddressIsNotUsed() throws Exception {
    TChannelInbound real = serve(TChannelTransport.of("real"), "127.0.0.2", null, "real");
    TChannelTransport b = TChannelTransport.of("svc-b");
    TChannelInbound inB = serve(b, "127.0.0.1", null, "svc-b");

    try (SocketPeer spoofer = SocketPeer.connect(inB.address())) {
      spoofer.write(init(real.hostPort()));
      assertThat(spoofer.read().type()).as("init res").isEqualTo(0x02);
      spoofer.assertOpen(2); // B has handled the init req (and its claim) by now

      TChannelOutbound toReal = started(b.singleOutbound(real.hostPort()));
      assertThat(call(toReal, "real")).isEqualTo("real");
      assertThat(b.peer(real.hostPort()).connection().isInitiator())
          .as("B dialled the real server")
          .isTrue();
      spoofer.assertOpen(3); // the next frame it gets answers its ping: no call came its way
    }
  }

  /** The positive control: a claim the remote address backs is used, even by a raw peer. */
  @Test
  void aClaimBackedByTheRemoteAddressIsUsed() throws Exception {
    TChannelTransport b = TChannelTransport.of("svc-b");
    TChannelInbound inB = serve(b, "127.0.0.1", null, "svc-b");
    String claimed =
        "127.0.0.1:1"; // nothing listens there: only the accepted connection can answer

    try (SocketPeer peer = SocketPeer.connect(inB.address())) {
      peer.write(init(claimed));
      assertThat(peer.read().type()).as("init res").isEqualTo(0x02);
      peer.assertOpen(2);

      TChannelOutbound toPeer = started(b.singleOutbound(claimed));
      CompletableFuture<Response> pending = toPeer.call(request("real", "who"));
      SocketPeer.Frame f = peer.read();
      assertThat(f.type()).as("a call req on the accepted connection, got %s", f).isEqualTo(0x03);
      assertThat(b.peer(claimed).connection().isInitiator()).isFalse();
      pending.cancel(false);
    }
  }

  @Test
  void aClientCertificateNamingTheClaimedHostBacksAClaimFromAnotherAddress() throws Exception {
    TChannelTransport b = TChannelTransport.of("svc-b");
    TChannelInbound inB =
        serve(b, "127.0.0.1", certs.serverConfig(ClientAuth.REQUIRE).build(), "svc-b");
    TChannelTransport a =
        TChannelTransport.builder()
            .serviceName("svc-a")
            .tls(certs.clientConfig().keyCertChain(at127002.certificate(), at127002.key()).build())
            .build();
    TChannelInbound inA = serve(a, "127.0.0.2", null, "svc-a");

    assertThat(call(started(a.singleOutbound(inB.hostPort())), "svc-b")).isEqualTo("svc-b");
    assertThat(call(started(b.singleOutbound(inA.hostPort())), "svc-a")).isEqualTo("svc-a");
    assertThat(b.peer(inA.hostPort()).connection().isInitiator())
        .as("B uses the connection A dialled")
        .isFalse();
    assertThat(inA.acceptedConnections()).as("B did not dial A").isZero();
  }

  @Test
  void aClientCertificateNotNamingTheClaimedHostDoesNotBackIt() throws Exception {
    TChannelTransport b = TChannelTransport.of("svc-b");
    TChannelInbound inB =
        serve(b, "127.0.0.1", certs.serverConfig(ClientAuth.REQUIRE).build(), "svc-b");
    TChannelTransport a =
        TChannelTransport.builder()
            .serviceName("svc-a")
            .tls(certs.mutualClientConfig().build()) // CN=test-client: no 127.0.0.2
            .build();
    TChannelInbound inA = serve(a, "127.0.0.2", null, "svc-a");

    assertThat(call(started(a.singleOutbound(inB.hostPort())), "svc-b")).isEqualTo("svc-b");
    assertThat(call(started(b.singleOutbound(inA.hostPort())), "svc-a")).isEqualTo("svc-a");
    assertThat(b.peer(inA.hostPort()).connection().isInitiator()).as("B dialled A").isTrue();
    assertThat(inA.acceptedConnections()).isEqualTo(1);
  }

  @Test
  void withOutboundTlsAPlaintextConnectionIsNotUsedEvenFromTheClaimedAddress() throws Exception {
    TChannelTransport b =
        TChannelTransport.builder()
            .serviceName("svc-b")
            .tls(certs.mutualClientConfig().build())
            .build();
    TChannelInbound inB =
        serve(
            b,
            "127.0.0.1",
            certs.serverConfig(ClientAuth.NONE).build(),
            TlsMode.PERMISSIVE,
            "svc-b");
    TChannelTransport a = TChannelTransport.of("svc-a"); // dials plaintext
    TChannelInbound inA =
        serve(
            a, "127.0.0.1", certs.serverConfig(ClientAuth.NONE).build(), TlsMode.ENFORCED, "svc-a");

    assertThat(call(started(a.singleOutbound(inB.hostPort())), "svc-b")).isEqualTo("svc-b");
    assertThat(call(started(b.singleOutbound(inA.hostPort())), "svc-a")).isEqualTo("svc-a");
    Connection used = b.peer(inA.hostPort()).connection();
    assertThat(used.isInitiator()).as("B dialled A").isTrue();
    assertThat(used.channel().pipeline().get(SslHandler.class)).as("over TLS").isNotNull();
  }

  // ---------------------------------------------------------------------------------------------------

  private TChannelInbound serve(TChannelTransport t, String host, TlsConfig tls, String answer) {
    return serve(t, host, tls, TlsMode.ENFORCED, answer);
  }

  /** Starts a dispatcher on an inbound of {@code t} whose procedure {@code who} answers {@code answer}. */
  private TChannelInbound serve(
      TChannelTransport t, String host, TlsConfig tls, TlsMode mode, String answer) {
    TChannelInbound.Builder ib = t.inboundBuilder().host(host);
    if (tls != null) {
      ib.tls(tls, mode);
    }
    TChannelInbound inbound = ib.build();
    Dispatcher d =
        Dispatcher.builder(answer)
            .inbound(inbound)
            .shutdownGracePeriod(Duration.ofMillis(500))
            .logLifecycle(false)
            .build();
    d.register(Raw.procedure("who", body -> answer.getBytes(UTF_8)));
    d.start();
    cleanup.add(
        () -> {
          d.stop();
          t.stop();
        });
    return inbound;
  }

  private <T extends io.yarpc.transport.Lifecycle> T started(T component) {
    component.start();
    cleanup.add(component::stop);
    return component;
  }

  private static byte[] init(String hostPort) {
    Map<String, String> h = new LinkedHashMap<>();
    h.put("host_port", hostPort);
    h.put("process_name", "claimer[1]");
    h.put("tchannel_language", "java");
    h.put("tchannel_language_version", "17");
    h.put("tchannel_version", "test");
    return Wire.init(0x01, 1, 2, h);
  }

  private static Request request(String service, String procedure) {
    RequestMeta meta =
        RequestMeta.builder()
            .caller("test")
            .service(service)
            .procedure(procedure)
            .encoding("raw")
            .deadline(Deadline.after(WAIT))
            .build();
    return Request.of(meta, Body.of(new byte[] {1}));
  }

  private static String call(TChannelOutbound out, String service) throws Exception {
    Response r = out.call(request(service, "who")).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    try {
      return new String(r.body().toByteArray(), UTF_8);
    } finally {
      r.body().release();
    }
  }
}
