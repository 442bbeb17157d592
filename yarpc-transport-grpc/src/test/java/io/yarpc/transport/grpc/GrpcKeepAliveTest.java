package io.yarpc.transport.grpc;

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
import io.yarpc.transport.InboundLimits;
import io.yarpc.transport.KeepAlive;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * gRPC keepalive over real sockets. Client side: a peer reached through a {@link TcpProxy} that then
 * black-holes its connection (open, silent) is found dead by grpc-java's keepalive (whose time is at least
 * 10 s, so this test takes that long): the calls in flight on it fail with {@code unavailable} instead of
 * waiting for their deadlines, the peer leaves {@code AVAILABLE}, and a round-robin list's calls go to
 * the healthy peer. Server side: pings at the rate the inbound permits are answered and not taken for
 * abuse, with and without calls.
 */
@Timeout(90)
class GrpcKeepAliveTest {
  private static final Duration LONG_DEADLINE = Duration.ofSeconds(60);

  private final List<Runnable> cleanup = new ArrayList<>();

  @AfterEach
  void stop() {
    for (int i = cleanup.size() - 1; i >= 0; i--) {
      cleanup.get(i).run();
    }
  }

  private GrpcInbound server(InboundLimits limits) {
    GrpcInbound inbound =
        GrpcTransport.create()
            .inboundBuilder(new InetSocketAddress("127.0.0.1", 0))
            .limits(limits)
            .gracePeriod(Duration.ZERO)
            .build();
    Dispatcher server = Dispatcher.builder("server").inbound(inbound).build();
    server.register(Raw.procedure("echo", body -> body));
    server.start();
    cleanup.add(server::stop);
    return inbound;
  }

  /** Every status the peer reports, retained for the test by a subscriber of its own. */
  private static final class Watch implements PeerSubscriber {
    final List<ConnectionStatus> seen = new CopyOnWriteArrayList<>();

    @Override
    public void onStatusChanged(Peer peer) {
      seen.add(peer.status());
    }
  }

  private static CompletableFuture<byte[]> echo(RawClient client, Duration timeout) {
    return client.call(
        "echo", "hi".getBytes(UTF_8), CallOptions.builder().timeout(timeout).build());
  }

  private static YarpcException failure(CompletableFuture<?> call) throws Exception {
    try {
      call.get(30, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      return YarpcException.from(e);
    }
    throw new AssertionError("the call succeeded");
  }

  private static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime() - deadline).as("waiting for: " + what).isNegative();
      Thread.sleep(10);
    }
  }

  @Test
  void aBlackHoledPeerFailsItsCallsAndRoundRobinMovesToTheHealthyOne() throws Exception {
    GrpcInbound inbound = server(InboundLimits.defaults());
    TcpProxy proxy = TcpProxy.start(new InetSocketAddress("127.0.0.1", inbound.port()));
    cleanup.add(proxy::close);
    String healthy = "127.0.0.1:" + inbound.port();

    GrpcTransport transport =
        GrpcTransport.builder()
            .keepAlive(
                KeepAlive.builder()
                    .time(Duration.ofMillis(200)) // grpc-java makes it 10 s
                    .timeout(Duration.ofMillis(500))
                    .build())
            .build();
    RoundRobinPeerList list =
        RoundRobinPeerList.builder(transport).peers(List.of(proxy.hostPort(), healthy)).build();
    Dispatcher client =
        Dispatcher.builder("client")
            .outbound(
                "via-proxy",
                Outbounds.builder()
                    .serviceName("server")
                    .unary(transport.singleOutbound(proxy.hostPort()))
                    .build())
            .outbound("server", Outbounds.unary(transport.outbound(list)))
            .build();
    client.start();
    cleanup.add(client::stop);
    RawClient viaProxy = RawClient.of(client.clientConfig("via-proxy"));
    RawClient roundRobin = RawClient.of(client.clientConfig("server"));
    Watch w = new Watch();
    Peer blackHoled = transport.retainPeer(proxy.hostPort(), w);
    cleanup.add(() -> transport.releasePeer(proxy.hostPort(), w));
    assertThat(echo(viaProxy, LONG_DEADLINE).get(10, TimeUnit.SECONDS))
        .isEqualTo("hi".getBytes(UTF_8));
    await(
        "both peers available",
        () ->
            list.introspect().peers().stream()
                    .filter(p -> p.status() == ConnectionStatus.AVAILABLE)
                    .count()
                == 2);

    proxy.blackHole();
    CompletableFuture<byte[]> inFlight = echo(viaProxy, LONG_DEADLINE);
    List<CompletableFuture<byte[]>> spread = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      spread.add(echo(roundRobin, LONG_DEADLINE)); // half of them go into the black hole
    }
    YarpcException e = failure(inFlight);
    assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(e.getMessage()).contains("Keepalive failed");
    int failed = 0;
    for (CompletableFuture<byte[]> c : spread) {
      try {
        c.get(30, TimeUnit.SECONDS);
      } catch (ExecutionException x) {
        assertThat(YarpcException.from(x).code()).isEqualTo(Code.UNAVAILABLE);
        failed++;
      }
    }
    assertThat(failed).as("round-robin calls that went into the black hole").isEqualTo(2);
    await(
        "the black-holed peer to leave AVAILABLE",
        () -> blackHoled.status() != ConnectionStatus.AVAILABLE);
    // available, then unavailable as the channel drops the connection, then connecting: the
    // reconnection reaches the proxy, whose silence keeps it from ever becoming ready
    assertThat(w.seen).contains(ConnectionStatus.UNAVAILABLE);
    assertThat(w.seen).last().isNotEqualTo(ConnectionStatus.AVAILABLE);
    for (int i = 0; i < 20; i++) {
      assertThat(echo(roundRobin, Duration.ofSeconds(5)).get(10, TimeUnit.SECONDS))
          .as("call %d after the peer was found dead", i)
          .isEqualTo("hi".getBytes(UTF_8));
    }
  }

  @Test
  void pingsAtThePermittedRateAreAnsweredWithAndWithoutCalls() throws Exception {
    GrpcInbound inbound =
        server(
            InboundLimits.builder()
                .permitKeepAliveTime(Duration.ofMillis(100))
                .permitKeepAliveWithoutCalls(true)
                .build());
    try (RawH2Client pinger = RawH2Client.connect(inbound.port(), Map.of())) {
      for (int i = 0; i < 8; i++) {
        Thread.sleep(150); // a client pinging every 150 ms, slower than the 100 ms permitted
        pinger.ping();
      }
      RawH2Client.await("8 ping acks", () -> pinger.pingAcks.get() == 8);
      assertThat(pinger.goAways).isEmpty();
      assertThat(pinger.ended()).isFalse();
    }
  }

  @Test
  void pingsWithoutCallsAreRefusedUnlessPermitted() throws Exception {
    GrpcInbound inbound =
        server(InboundLimits.builder().permitKeepAliveTime(Duration.ofMillis(100)).build());
    try (RawH2Client pinger = RawH2Client.connect(inbound.port(), Map.of())) {
      for (int i = 0; i < 8 && !pinger.ended(); i++) {
        Thread.sleep(150); // the rate is permitted, but not without calls
        pinger.ping();
      }
      RawH2Client.GoAway goAway = pinger.awaitGoAway();
      assertThat(goAway.errorCode()).isEqualTo(RawH2Client.ENHANCE_YOUR_CALM);
      assertThat(goAway.debug()).isEqualTo("too_many_pings");
    }
  }
}
