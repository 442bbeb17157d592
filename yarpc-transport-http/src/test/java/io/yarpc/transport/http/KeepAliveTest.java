package io.yarpc.transport.http;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.CallOptions;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.peer.ConnectionStatus;
import io.yarpc.peer.Peer;
import io.yarpc.peer.PeerChooser;
import io.yarpc.peer.PeerSubscriber;
import io.yarpc.peer.RoundRobinPeerList;
import io.yarpc.peer.SinglePeerChooser;
import io.yarpc.testing.TcpProxy;
import io.yarpc.transport.KeepAlive;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Keepalive over real sockets, HTTP/1.1 and h2c: a client reaches a server through a {@link TcpProxy},
 * which then black-holes the connection (keeps it open, forwards nothing). With keepalive on, a call in
 * flight fails with {@code unavailable} within the keepalive time and timeout instead of at its
 * deadline, the peer becomes unavailable and stays so while the black hole lasts (its probe asks {@code
 * OPTIONS *} and gets no answer), and a round-robin list's calls go to the healthy peer. Without
 * keepalive, the same call waits for its deadline and the peer's TCP probe keeps it available.
 */
@Timeout(60)
class KeepAliveTest {
  private static final KeepAlive KEEPALIVE =
      KeepAlive.builder().time(Duration.ofMillis(200)).timeout(Duration.ofMillis(500)).build();
  private static final Duration LONG_DEADLINE = Duration.ofSeconds(30);

  private final List<Runnable> cleanup = new ArrayList<>();
  private HttpInbound inbound;
  private TcpProxy proxy;

  @BeforeEach
  void startServer() throws Exception {
    inbound = HttpTransport.create().inbound();
    Dispatcher server = Dispatcher.builder("server").inbound(inbound).build();
    server.register(Raw.procedure("echo", body -> body));
    server.start();
    cleanup.add(server::stop);
    proxy = TcpProxy.start(new InetSocketAddress("127.0.0.1", inbound.address().getPort()));
    cleanup.add(proxy::close);
  }

  @AfterEach
  void stop() {
    for (int i = cleanup.size() - 1; i >= 0; i--) {
      cleanup.get(i).run();
    }
  }

  private static HttpTransport clientTransport(KeepAlive keepAlive) {
    return HttpTransport.builder()
        .eventLoopThreads(1)
        .peerProbe(Duration.ofMillis(500), Duration.ofMillis(10), Duration.ofMillis(200))
        .keepAlive(keepAlive)
        .build();
  }

  private RawClient client(HttpTransport transport, PeerChooser chooser, boolean http2) {
    Dispatcher d =
        Dispatcher.builder("client")
            .outbound(
                "server", Outbounds.unary(transport.outboundBuilder(chooser).http2(http2).build()))
            .build();
    d.start();
    cleanup.add(d::stop);
    return RawClient.of(d.clientConfig("server"));
  }

  private static CompletableFuture<byte[]> echo(RawClient client, Duration timeout) {
    return client.call(
        "echo", "hi".getBytes(UTF_8), CallOptions.builder().timeout(timeout).build());
  }

  /** Every status the peer reports, retained for the test by a subscriber of its own. */
  private static final class Watch implements PeerSubscriber {
    final List<ConnectionStatus> seen = new CopyOnWriteArrayList<>();

    @Override
    public void onStatusChanged(Peer peer) {
      seen.add(peer.status());
    }
  }

  private Peer watch(HttpTransport transport, String identifier, Watch w) {
    Peer peer = transport.retainPeer(identifier, w);
    cleanup.add(() -> transport.releasePeer(identifier, w));
    return peer;
  }

  private static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime() - deadline).as("waiting for: " + what).isNegative();
      Thread.sleep(10);
    }
  }

  private static YarpcException failure(CompletableFuture<?> call) throws Exception {
    try {
      call.get(15, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      return YarpcException.from(e);
    }
    throw new AssertionError("the call succeeded");
  }

  @ParameterizedTest(name = "http2={0}")
  @ValueSource(booleans = {false, true})
  void aBlackHoledConnectionFailsItsCallAndThePeerStaysUnavailable(boolean http2) throws Exception {
    HttpTransport transport = clientTransport(KEEPALIVE);
    assertThat(transport.keepAlive()).isEqualTo(KEEPALIVE);
    RawClient client = client(transport, SinglePeerChooser.of(transport, proxy.hostPort()), http2);
    Watch w = new Watch();
    Peer peer = watch(transport, proxy.hostPort(), w);
    assertThat(echo(client, LONG_DEADLINE).get(10, TimeUnit.SECONDS))
        .isEqualTo("hi".getBytes(UTF_8));
    assertThat(peer.status()).isEqualTo(ConnectionStatus.AVAILABLE);

    proxy.blackHole();
    YarpcException e = failure(echo(client, LONG_DEADLINE));
    assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(e.getMessage())
        .isEqualTo(
            "connection to peer "
                + proxy.hostPort()
                + " closed: no answer to a keepalive ping within 500ms");
    await("the peer to be unavailable", () -> peer.status() == ConnectionStatus.UNAVAILABLE);
    // its probe asks OPTIONS *, which the black hole never answers
    await(
        "a probe to fail",
        () -> "no answer to OPTIONS * within 500ms".equals(peer.unavailableReason()));
    assertThat(w.seen)
        .doesNotContain(ConnectionStatus.CONNECTING)
        .last()
        .isEqualTo(ConnectionStatus.UNAVAILABLE);

    proxy.forward(); // the network heals: the next probe gets its answer
    await("the peer to be available again", () -> peer.status() == ConnectionStatus.AVAILABLE);
    assertThat(echo(client, LONG_DEADLINE).get(10, TimeUnit.SECONDS))
        .isEqualTo("hi".getBytes(UTF_8));
  }

  @ParameterizedTest(name = "http2={0}")
  @ValueSource(booleans = {false, true})
  void roundRobinMovesCallsToTheHealthyPeer(boolean http2) throws Exception {
    HttpTransport transport = clientTransport(KEEPALIVE);
    RoundRobinPeerList list =
        RoundRobinPeerList.builder(transport)
            .peers(List.of(proxy.hostPort(), inbound.hostPort()))
            .build();
    RawClient client = client(transport, list, http2);
    Watch w = new Watch();
    Peer blackHoled = watch(transport, proxy.hostPort(), w);
    await(
        "both peers available",
        () ->
            list.introspect().peers().stream()
                    .filter(p -> p.status() == ConnectionStatus.AVAILABLE)
                    .count()
                == 2);
    for (int i = 0; i < 4; i++) {
      echo(client, LONG_DEADLINE).get(10, TimeUnit.SECONDS);
    }

    proxy.blackHole();
    List<CompletableFuture<byte[]>> calls = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      calls.add(echo(client, LONG_DEADLINE)); // every other one goes into the black hole
    }
    int failed = 0;
    for (CompletableFuture<byte[]> c : calls) {
      try {
        c.get(15, TimeUnit.SECONDS);
      } catch (ExecutionException e) {
        assertThat(YarpcException.from(e).code()).isEqualTo(Code.UNAVAILABLE);
        failed++;
      }
    }
    assertThat(failed).as("calls sent into the black hole, failed by the keepalive").isPositive();
    await(
        "the black-holed peer to be unavailable",
        () -> blackHoled.status() == ConnectionStatus.UNAVAILABLE);
    for (int i = 0; i < 20; i++) {
      assertThat(echo(client, Duration.ofSeconds(5)).get(10, TimeUnit.SECONDS))
          .as("call %d after the peer was found dead", i)
          .isEqualTo("hi".getBytes(UTF_8));
    }
    assertThat(blackHoled.status()).isEqualTo(ConnectionStatus.UNAVAILABLE);
  }

  @ParameterizedTest(name = "http2={0}")
  @ValueSource(booleans = {false, true})
  void withoutCallsAnIdleConnectionIsCheckedAndAnIdlePeerFoundDead(boolean http2) throws Exception {
    HttpTransport transport = clientTransport(KEEPALIVE.toBuilder().withoutCalls(true).build());
    RawClient client = client(transport, SinglePeerChooser.of(transport, proxy.hostPort()), http2);
    Watch w = new Watch();
    Peer peer = watch(transport, proxy.hostPort(), w);
    echo(client, LONG_DEADLINE).get(10, TimeUnit.SECONDS);
    int connections = proxy.acceptedConnections();
    if (http2) {
      Thread.sleep(1_000); // several keepalive times
      assertThat(proxy.acceptedConnections())
          .as("h2c pings its connection: no new connection")
          .isEqualTo(connections);
    } else {
      // (a bounded wait, not a sleep: on a loaded machine the checks may come later than their
      // time)
      // the third check begins once the first two were answered
      await(
          "HTTP/1.1 to ask OPTIONS * three times, on connections of their own",
          () -> proxy.acceptedConnections() >= connections + 3);
    }
    assertThat(w.seen).as("every check was answered").doesNotContain(ConnectionStatus.UNAVAILABLE);

    proxy.blackHole();
    await("the idle peer to be unavailable", () -> peer.status() == ConnectionStatus.UNAVAILABLE);
    assertThat(peer.unavailableReason())
        .isIn(
            "the connection was closed: no answer to a keepalive ping within 500ms",
            "no answer to OPTIONS * within 500ms");
  }

  @ParameterizedTest(name = "http2={0}")
  @ValueSource(booleans = {false, true})
  void withoutKeepAliveACallOnABlackHoledConnectionWaitsForItsDeadline(boolean http2)
      throws Exception {
    HttpTransport transport = clientTransport(null);
    RawClient client = client(transport, SinglePeerChooser.of(transport, proxy.hostPort()), http2);
    Peer peer = watch(transport, proxy.hostPort(), new Watch());
    echo(client, LONG_DEADLINE).get(10, TimeUnit.SECONDS);
    proxy.blackHole();
    assertThat(failure(echo(client, Duration.ofMillis(1500))).code())
        .isEqualTo(Code.DEADLINE_EXCEEDED);
    assertThat(peer.status()).isEqualTo(ConnectionStatus.AVAILABLE);
  }

  @Test
  void theInboundAnswersTheKeepaliveQuestion() throws Exception {
    try (java.net.Socket s = new java.net.Socket()) {
      s.connect(inbound.address(), 5_000);
      s.setSoTimeout(5_000);
      s.getOutputStream()
          .write(
              ("OPTIONS * HTTP/1.1\r\nHost: "
                      + inbound.hostPort()
                      + "\r\nConnection: close\r\n\r\n")
                  .getBytes(UTF_8));
      String answer = new String(s.getInputStream().readAllBytes(), UTF_8);
      assertThat(answer).startsWith("HTTP/1.1 404 ");
    }
  }

  @Test
  void withKeepAliveAPortThatAcceptsButNeverAnswersIsNeverAvailable() throws Exception {
    proxy.blackHole(); // from the start: connects succeed, nothing ever answers
    HttpTransport silent = clientTransport(KEEPALIVE);
    client(silent, SinglePeerChooser.of(silent, proxy.hostPort()), false);
    Watch w = new Watch();
    Peer peer = watch(silent, proxy.hostPort(), w);
    await(
        "the probe to fail",
        () -> "no answer to OPTIONS * within 500ms".equals(peer.unavailableReason()));
    assertThat(peer.status()).isEqualTo(ConnectionStatus.UNAVAILABLE);
    assertThat(w.seen).doesNotContain(ConnectionStatus.AVAILABLE);

    HttpTransport tcpOnly = clientTransport(null); // without keepalive the probe only connects
    client(tcpOnly, SinglePeerChooser.of(tcpOnly, proxy.hostPort()), false);
    Peer connects = watch(tcpOnly, proxy.hostPort(), new Watch());
    await("the TCP probe to succeed", () -> connects.status() == ConnectionStatus.AVAILABLE);
  }
}
