package io.yarpc.transport.tchannel;

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
import io.yarpc.peer.PeerSubscriber;
import io.yarpc.peer.RoundRobinPeerList;
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

/**
 * Keepalive over real sockets: a client reaches a server through a {@link TcpProxy}, which then
 * black-holes the connection (keeps it open, forwards nothing). With keepalive on, the client notices
 * within its keepalive time and timeout, instead of at each call's deadline: the pending call fails with
 * {@code unavailable}, the peer is no longer available, and a round-robin list moves calls to the
 * healthy peer. Without keepalive, the same call waits for its deadline.
 */
@Timeout(60)
class KeepAliveTest {
  private static final KeepAlive KEEPALIVE =
      KeepAlive.builder().time(Duration.ofMillis(200)).timeout(Duration.ofMillis(500)).build();
  private static final Duration LONG_DEADLINE = Duration.ofSeconds(30);

  private final List<Runnable> cleanup = new ArrayList<>();
  private TChannelInbound inbound;
  private TcpProxy proxy;

  @BeforeEach
  void startServer() throws Exception {
    inbound = TChannelTransport.of("server").inbound();
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

  private TChannelTransport clientTransport(KeepAlive keepAlive) {
    return TChannelTransport.builder()
        .serviceName("client")
        .handshakeTimeout(Duration.ofSeconds(1))
        .keepAlive(keepAlive)
        .build();
  }

  private RawClient client(TChannelTransport transport, TChannelOutbound outbound) {
    Dispatcher d =
        Dispatcher.builder("client").outbound("server", Outbounds.unary(outbound)).build();
    d.start();
    cleanup.add(d::stop);
    return RawClient.of(d.clientConfig("server"));
  }

  private static CompletableFuture<byte[]> echo(RawClient client, Duration timeout) {
    return client.call(
        "echo", "hi".getBytes(UTF_8), CallOptions.builder().timeout(timeout).build());
  }

  /** Every status the peer reports, with its reason, retained for the test by a subscriber of its own. */
  private static final class Watch implements PeerSubscriber {
    final List<ConnectionStatus> seen = new CopyOnWriteArrayList<>();
    final List<String> reasons = new CopyOnWriteArrayList<>();

    @Override
    public void onStatusChanged(Peer peer) {
      seen.add(peer.status());
      reasons.add(String.valueOf(peer.unavailableReason()));
    }
  }

  private Peer watch(TChannelTransport transport, String identifier, Watch w) {
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

  @Test
  void aBlackHoledConnectionFailsItsCallAndThePeerIsNoLongerAvailable() throws Exception {
    TChannelTransport transport = clientTransport(KEEPALIVE);
    RawClient client = client(transport, transport.singleOutbound(proxy.hostPort()));
    Watch w = new Watch();
    Peer peer = watch(transport, proxy.hostPort(), w);
    assertThat(new String(echo(client, LONG_DEADLINE).get(10, TimeUnit.SECONDS), UTF_8))
        .isEqualTo("hi");
    assertThat(peer.status()).isEqualTo(ConnectionStatus.AVAILABLE);

    proxy.blackHole();
    YarpcException e = failure(echo(client, LONG_DEADLINE));
    assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(e.getMessage())
        .startsWith("tchannel connection to ")
        .endsWith(" closed: no answer to a keepalive ping within 500ms");
    await("the peer to leave AVAILABLE", () -> peer.status() != ConnectionStatus.AVAILABLE);
    assertThat(w.seen).contains(ConnectionStatus.UNAVAILABLE);
    // the redial connects to the proxy, whose silence fails the handshake: never available again
    await(
        "a redial through the black hole to fail",
        () -> peer.unavailableReason() != null && !peer.unavailableReason().contains("keepalive"));
    assertThat(peer.status()).isNotEqualTo(ConnectionStatus.AVAILABLE);

    proxy.forward(); // the network heals: the peer reconnects with its backoff
    await("the peer to be available again", () -> peer.status() == ConnectionStatus.AVAILABLE);
    assertThat(echo(client, LONG_DEADLINE).get(10, TimeUnit.SECONDS))
        .isEqualTo("hi".getBytes(UTF_8));
  }

  @Test
  void withoutCallsAnIdlePeerIsFoundDeadBeforeACallIsSentToIt() throws Exception {
    TChannelTransport transport = clientTransport(KEEPALIVE.toBuilder().withoutCalls(true).build());
    RawClient client = client(transport, transport.singleOutbound(proxy.hostPort()));
    Watch w = new Watch();
    Peer peer = watch(transport, proxy.hostPort(), w);
    echo(client, LONG_DEADLINE).get(10, TimeUnit.SECONDS);
    Thread.sleep(700); // idle pings are answered: the connection stays
    assertThat(peer.status()).isEqualTo(ConnectionStatus.AVAILABLE);
    assertThat(w.seen).doesNotContain(ConnectionStatus.UNAVAILABLE);

    proxy.blackHole();
    await("the idle peer to leave AVAILABLE", () -> w.seen.contains(ConnectionStatus.UNAVAILABLE));
    assertThat(w.reasons)
        .contains("the connection was closed: no answer to a keepalive ping within 500ms");
  }

  @Test
  void withoutKeepAliveACallOnABlackHoledConnectionWaitsForItsDeadline() throws Exception {
    TChannelTransport transport = clientTransport(null);
    assertThat(transport.keepAlive()).isNull();
    RawClient client = client(transport, transport.singleOutbound(proxy.hostPort()));
    echo(client, LONG_DEADLINE).get(10, TimeUnit.SECONDS);
    proxy.blackHole();
    assertThat(failure(echo(client, Duration.ofMillis(1500))).code())
        .isEqualTo(Code.DEADLINE_EXCEEDED);
  }

  @Test
  void roundRobinMovesCallsToTheHealthyPeer() throws Exception {
    TChannelTransport transport = clientTransport(KEEPALIVE);
    String healthy = inbound.hostPort();
    RoundRobinPeerList list =
        RoundRobinPeerList.builder(transport).peers(List.of(proxy.hostPort(), healthy)).build();
    RawClient client = client(transport, transport.outbound(list));
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
      calls.add(echo(client, LONG_DEADLINE)); // every other one goes to the black hole
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
        "the black-holed peer to leave AVAILABLE",
        () -> blackHoled.status() != ConnectionStatus.AVAILABLE);
    for (int i = 0; i < 20; i++) {
      assertThat(echo(client, Duration.ofSeconds(5)).get(10, TimeUnit.SECONDS))
          .as("call %d after the peer was found dead", i)
          .isEqualTo("hi".getBytes(UTF_8));
    }
  }
}
