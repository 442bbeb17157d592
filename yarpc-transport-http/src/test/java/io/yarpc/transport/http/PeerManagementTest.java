package io.yarpc.transport.http;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.yarpc.Dispatcher;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.peer.ConnectionStatus;
import io.yarpc.peer.Peer;
import io.yarpc.peer.PeerSubscriber;
import io.yarpc.peer.RoundRobinPeerList;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.InboundLimits;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The transport as the owner of peers: peers probe their address to report availability, reference
 * counting by subscriber, and a round-robin list over several inbounds spreading calls and skipping a peer
 * that is down.
 */
class PeerManagementTest {
  private final HttpTransport client =
      HttpTransport.builder()
          .eventLoopThreads(1)
          .peerProbe(Duration.ofMillis(500), Duration.ofMillis(5), Duration.ofMillis(50))
          .build();
  private final List<Dispatcher> servers = new ArrayList<>();
  private final List<HttpInbound> inbounds = new ArrayList<>();

  @AfterEach
  void stop() {
    client.stop();
    servers.forEach(Dispatcher::stop);
  }

  private HttpInbound server(String name) {
    return server(name, 1000);
  }

  private HttpInbound server(String name, int maxConcurrentStreams) {
    HttpTransport t = HttpTransport.builder().eventLoopThreads(1).build();
    HttpInbound in =
        t.inboundBuilder()
            .limits(
                InboundLimits.builder()
                    .maxConcurrentCallsPerConnection(maxConcurrentStreams)
                    .build())
            .build();
    Dispatcher d = Dispatcher.builder("peers").inbound(in).build();
    d.register(
        Procedure.builder("who")
            .unary(
                r -> CompletableFuture.completedFuture(Response.of(Body.of(name.getBytes(UTF_8)))))
            .build());
    d.start();
    servers.add(d);
    inbounds.add(in);
    return in;
  }

  private static int closedPort() throws Exception {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private static void awaitStatus(Peer peer, ConnectionStatus status) throws InterruptedException {
    for (int i = 0; i < 1000 && peer.status() != status; i++) {
      Thread.sleep(10);
    }
    assertThat(peer.status()).as(peer.identifier()).isEqualTo(status);
  }

  private static RequestMeta meta() {
    return RequestMeta.builder()
        .caller("client")
        .service("peers")
        .procedure("who")
        .encoding("raw")
        .deadline(Deadline.after(Duration.ofSeconds(5)))
        .build();
  }

  private static String call(HttpOutbound out) throws Exception {
    Response r = out.call(Request.of(meta(), Body.empty())).get(10, TimeUnit.SECONDS);
    try {
      return new String(r.body().toByteArray(), UTF_8);
    } finally {
      r.body().release();
    }
  }

  @Test
  void peersProbeTheirAddressAndAreReferenceCounted() throws Exception {
    client.start();
    HttpInbound up = server("up");
    PeerSubscriber a = p -> {};
    PeerSubscriber b = p -> {};
    List<ConnectionStatus> seenByA = new java.util.concurrent.CopyOnWriteArrayList<>();
    PeerSubscriber recording = p -> seenByA.add(p.status());

    Peer live = client.retainPeer(up.hostPort(), recording);
    Peer same = client.retainPeer(up.hostPort(), a);
    assertThat(same).isSameAs(live);
    awaitStatus(live, ConnectionStatus.AVAILABLE);
    assertThat(seenByA).contains(ConnectionStatus.AVAILABLE);

    Peer down = client.retainPeer("127.0.0.1:" + closedPort(), b);
    awaitStatus(down, ConnectionStatus.UNAVAILABLE);

    assertThat(client.peers()).hasSize(2);
    client.releasePeer(up.hostPort(), recording);
    assertThat(client.peers()).hasSize(2); // still retained by a
    client.releasePeer(up.hostPort(), a);
    client.releasePeer(down.identifier(), b);
    assertThat(client.peers()).isEmpty();
  }

  @Test
  void roundRobinSpreadsCallsAndSkipsAPeerThatIsDown() throws Exception {
    HttpInbound one = server("one");
    HttpInbound two = server("two");
    String dead = "127.0.0.1:" + closedPort();
    RoundRobinPeerList list =
        RoundRobinPeerList.builder(client)
            .peers(List.of(one.hostPort(), two.hostPort(), dead))
            .build();
    HttpOutbound out = client.outbound(list);
    out.start(); // starts the transport and the list
    Map<String, Integer> hits = new HashMap<>();
    for (int i = 0; i < 20; i++) {
      hits.merge(call(out), 1, Integer::sum);
    }
    assertThat(hits).containsOnlyKeys("one", "two");
    assertThat(hits.get("one")).isGreaterThanOrEqualTo(5);
    assertThat(hits.get("two")).isGreaterThanOrEqualTo(5);

    // take "two" down: its calls fail once with unavailable, then the list only uses "one"
    servers.get(1).stop();
    int failures = 0;
    for (int i = 0; i < 20; i++) {
      try {
        assertThat(call(out)).isEqualTo("one");
      } catch (ExecutionException e) {
        assertThat(((YarpcException) e.getCause()).code()).isEqualTo(Code.UNAVAILABLE);
        failures++;
      }
    }
    assertThat(failures).isLessThanOrEqualTo(2);
    out.stop();
    assertThat(client.peers()).isEmpty();
  }

  @Test
  void h2cStreamsOverTheServersLimitWaitForAFreeSlot() throws Exception {
    HttpInbound in = server("h2", 4);
    HttpOutbound out = client.singleOutboundBuilder(in.hostPort()).http2(true).build();
    out.start();
    List<CompletableFuture<Response>> calls = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      calls.add(out.call(Request.of(meta(), Body.of(new byte[10_000]))));
    }
    for (CompletableFuture<Response> c : calls) {
      Response r = c.get(10, TimeUnit.SECONDS);
      assertThat(new String(r.body().toByteArray(), UTF_8)).isEqualTo("h2");
      r.body().release();
    }
    out.stop();
  }

  @Test
  void removingAPeerLetsItsCallsInFlightEndWellAndRefusesOneThatChoseItBefore() throws Exception {
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch answer = new CountDownLatch(1);
    HttpTransport t = HttpTransport.builder().eventLoopThreads(1).build();
    HttpInbound in = t.inbound();
    Dispatcher d = Dispatcher.builder("peers").inbound(in).build();
    d.register(
        Procedure.builder("who")
            .unary(
                r ->
                    CompletableFuture.supplyAsync(
                        () -> {
                          entered.countDown();
                          try {
                            answer.await(10, TimeUnit.SECONDS);
                          } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                          }
                          return Response.of(Body.of("slow".getBytes(UTF_8)));
                        }))
            .build());
    d.start();
    servers.add(d);
    RoundRobinPeerList list =
        RoundRobinPeerList.builder(client).peers(List.of(in.hostPort())).build();

    // a call in flight when its peer is removed (and released: the transport closes the peer) ends
    // well
    HttpOutbound out = client.outbound(list);
    out.start();
    CompletableFuture<Response> inFlight = out.call(Request.of(meta(), Body.empty()));
    assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
    list.update(List.of(), List.of(in.hostPort()));
    assertThat(client.peers()).isEmpty();
    answer.countDown();
    Response r = inFlight.get(10, TimeUnit.SECONDS);
    assertThat(new String(r.body().toByteArray(), UTF_8)).isEqualTo("slow");
    r.body().release();

    // a call whose peer was chosen before the removal and sent after it is refused, unprocessed
    RoundRobinPeerList second =
        RoundRobinPeerList.builder(client).peers(List.of(in.hostPort())).build();
    io.yarpc.peer.PeerChooser removesAfterChoosing =
        new io.yarpc.peer.PeerChooser() {
          @Override
          public CompletableFuture<io.yarpc.peer.PeerLease> choose(RequestMeta meta) {
            return second
                .choose(meta)
                .thenApply(
                    lease -> {
                      second.update(List.of(), List.of(in.hostPort()));
                      return lease;
                    });
          }

          @Override
          public void start() {
            second.start();
          }

          @Override
          public void stop() {
            second.stop();
          }

          @Override
          public boolean isRunning() {
            return second.isRunning();
          }
        };
    HttpOutbound late = client.outbound(removesAfterChoosing);
    late.start();
    assertThatThrownBy(() -> call(late))
        .isInstanceOf(ExecutionException.class)
        .cause()
        .isInstanceOfSatisfying(
            YarpcException.class,
            e -> {
              assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
              assertThat(e.unprocessed()).isTrue();
              assertThat(e.getMessage()).isEqualTo("peer " + in.hostPort() + " was released");
            });
    assertThat(client.peers()).isEmpty();
    late.stop();
    out.stop();
  }
}
