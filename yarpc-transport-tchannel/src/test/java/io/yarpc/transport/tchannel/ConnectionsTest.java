package io.yarpc.transport.tchannel;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.yarpc.CallOptions;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.peer.ConnectionStatus;
import io.yarpc.peer.RoundRobinPeerList;
import io.yarpc.peer.SinglePeerChooser;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Connections and peers: one connection per peer, reused and multiplexed; usable in both directions; a
 * dying peer fails its pending calls with {@code unavailable} at once; peer lists see the peers' status.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ConnectionsTest {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private final List<Runnable> cleanup = new ArrayList<>();
  private final CountDownLatch blocked = new CountDownLatch(2);

  @AfterEach
  void stop() {
    for (int i = cleanup.size() - 1; i >= 0; i--) {
      cleanup.get(i).run();
    }
  }

  private Dispatcher server(String name, TChannelInbound inbound, CountDownLatch block) {
    Dispatcher d =
        Dispatcher.builder(name)
            .inbound(inbound)
            .shutdownGracePeriod(Duration.ofMillis(500))
            .build();
    d.register(
        Raw.procedure("who", body -> name.getBytes(UTF_8)),
        Raw.procedure(
            "block",
            body -> {
              blocked.countDown();
              block.await(30, TimeUnit.SECONDS);
              return body;
            }));
    d.start();
    cleanup.add(
        () -> {
          block.countDown();
          d.stop();
        });
    return d;
  }

  private <T extends io.yarpc.transport.Lifecycle> T started(T component) {
    component.start();
    cleanup.add(component::stop);
    return component;
  }

  private static byte[] call(TChannelOutbound outbound, String service, String procedure)
      throws Exception {
    RequestMeta meta =
        RequestMeta.builder()
            .caller("test")
            .service(service)
            .procedure(procedure)
            .encoding("raw")
            .deadline(Deadline.after(WAIT))
            .build();
    Response r = outbound.call(Request.of(meta, Body.of(new byte[] {1}))).get(10, TimeUnit.SECONDS);
    try {
      return r.body().toByteArray();
    } finally {
      r.body().release();
    }
  }

  @Test
  void oneConnectionPerPeerMultiplexesCalls() throws Exception {
    TChannelTransport serverTransport = TChannelTransport.of("server");
    TChannelInbound inbound = serverTransport.inbound();
    server("server", inbound, new CountDownLatch(0));
    TChannelTransport clientTransport = started(TChannelTransport.of("client"));
    TChannelOutbound a = started(clientTransport.singleOutbound(inbound.hostPort()));
    TChannelOutbound b = started(clientTransport.singleOutbound(inbound.hostPort()));
    List<CompletableFuture<Response>> calls = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      RequestMeta meta =
          RequestMeta.builder()
              .caller("c")
              .service("server")
              .procedure("who")
              .encoding("raw")
              .deadline(Deadline.after(WAIT))
              .build();
      calls.add((i % 2 == 0 ? a : b).call(Request.of(meta, Body.empty())));
    }
    for (CompletableFuture<Response> f : calls) {
      Response r = f.get(10, TimeUnit.SECONDS);
      assertThat(new String(r.body().toByteArray(), UTF_8)).isEqualTo("server");
      r.body().release();
    }
    assertThat(inbound.acceptedConnections())
        .as("both outbounds share the peer's one connection")
        .isEqualTo(1);
  }

  @Test
  void aDyingPeerFailsPendingCallsAtOnce() throws Exception {
    TChannelTransport serverTransport = TChannelTransport.of("server");
    TChannelInbound inbound = serverTransport.inbound();
    CountDownLatch block = new CountDownLatch(1);
    server("server", inbound, block);
    TChannelTransport clientTransport = started(TChannelTransport.of("client"));
    TChannelOutbound out = started(clientTransport.singleOutbound(inbound.hostPort()));
    RequestMeta meta =
        RequestMeta.builder()
            .caller("c")
            .service("server")
            .procedure("block")
            .encoding("raw")
            .deadline(Deadline.after(Duration.ofMinutes(5)))
            .build();
    CompletableFuture<Response> pending = out.call(Request.of(meta, Body.of(new byte[] {1})));
    CompletableFuture<Response> pending2 = out.call(Request.of(meta, Body.of(new byte[] {2})));
    assertThat(blocked.await(10, TimeUnit.SECONDS)).as("both calls reached the handler").isTrue();
    inbound.closeConnections(); // the peer's end of the connection dies
    for (CompletableFuture<Response> f : List.of(pending, pending2)) {
      Throwable t = catchThrowable(() -> f.get(10, TimeUnit.SECONDS));
      assertThat(t)
          .as("failed long before its 5-minute deadline")
          .isInstanceOf(ExecutionException.class);
      assertThat(((YarpcException) t.getCause()).code()).isEqualTo(Code.UNAVAILABLE);
      assertThat(t.getCause().getMessage()).contains("closed");
    }
    block.countDown();
  }

  /**
   * The dial to a peer is shared by every call waiting for it: a caller that gives up while the handshake
   * is still under way must not cancel it for the others (nor orphan the connection it makes). The peer
   * here is a plain socket that answers the init req only when told to.
   */
  @Test
  void aCallerGivingUpDuringTheHandshakeDoesNotCancelTheSharedDial() throws Exception {
    try (ServerSocket server = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      TChannelTransport clientTransport = started(TChannelTransport.of("client"));
      TChannelOutbound out =
          started(clientTransport.singleOutbound("127.0.0.1:" + server.getLocalPort()));
      RequestMeta meta =
          RequestMeta.builder()
              .caller("c")
              .service("s")
              .procedure("p")
              .encoding("raw")
              .deadline(Deadline.after(WAIT))
              .build();
      CompletableFuture<Response> givesUp = out.call(Request.of(meta, Body.of(new byte[] {1})));
      CompletableFuture<Response> waits = out.call(Request.of(meta, Body.of(new byte[] {2})));

      try (java.net.Socket peer = server.accept()) {
        peer.setSoTimeout((int) WAIT.toMillis());
        java.io.DataInputStream in = new java.io.DataInputStream(peer.getInputStream());
        int size = in.readUnsignedShort();
        assertThat(in.readUnsignedByte()).as("init req").isEqualTo(0x01);
        in.readUnsignedByte();
        int id = in.readInt();
        in.skipNBytes(size - 8);

        assertThat(givesUp.cancel(false)).isTrue(); // mid-handshake
        Thread.sleep(100); // let a wrongly propagated cancellation reach the other call
        assertThat(waits).as("the other call still waits for the dial").isNotDone();

        java.util.Map<String, String> headers = new java.util.LinkedHashMap<>();
        headers.put("host_port", "127.0.0.1:" + server.getLocalPort());
        headers.put("process_name", "peer[1]");
        headers.put("tchannel_language", "java");
        headers.put("tchannel_language_version", "17");
        headers.put("tchannel_version", "test");
        peer.getOutputStream().write(Wire.init(0x02, id, 2, headers));
        peer.getOutputStream().flush();

        in.readUnsignedShort();
        assertThat(in.readUnsignedByte())
            .as("the waiting call, sent on the dialled connection")
            .isEqualTo(0x03);
      }
      // the peer hung up without answering: the waiting call fails as any call on a dying
      // connection does
      Throwable t = catchThrowable(() -> waits.get(10, TimeUnit.SECONDS));
      assertThat(((YarpcException) t.getCause()).code()).isEqualTo(Code.UNAVAILABLE);
    }
  }

  @Test
  void connectionRefusedFailsWithUnavailable() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    TChannelTransport clientTransport = started(TChannelTransport.of("client"));
    // fail-fast: the transport's own error for a refused connection (a waiting chooser, the
    // default,
    // waits for the peer until the deadline: examples' ClientBeforeServerTest)
    TChannelOutbound out =
        started(
            clientTransport.outbound(
                SinglePeerChooser.builder(clientTransport, "127.0.0.1:" + port)
                    .failFast(true)
                    .build()));
    RequestMeta meta =
        RequestMeta.builder()
            .caller("c")
            .service("s")
            .procedure("p")
            .encoding("raw")
            .deadline(Deadline.after(Duration.ofMinutes(5)))
            .build();
    Throwable t =
        catchThrowable(() -> out.call(Request.of(meta, Body.empty())).get(10, TimeUnit.SECONDS));
    assertThat(t).isInstanceOf(ExecutionException.class);
    assertThat(((YarpcException) t.getCause()).code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(t.getCause().getMessage())
        .startsWith("cannot connect to tchannel peer 127.0.0.1:" + port);
  }

  @Test
  void aPeerOfAnotherTransportIsRefusedWithInternal() throws Exception {
    TChannelTransport serverTransport = TChannelTransport.of("server");
    TChannelInbound inbound = serverTransport.inbound();
    server("server", inbound, new CountDownLatch(0));
    TChannelTransport ours = started(TChannelTransport.of("client"));
    TChannelTransport theirs = started(TChannelTransport.of("other"));
    TChannelOutbound out =
        started(ours.outbound(SinglePeerChooser.builder(theirs, inbound.hostPort()).build()));

    Throwable t = catchThrowable(() -> call(out, "server", "who"));

    assertThat(t).isInstanceOf(ExecutionException.class);
    YarpcException e = (YarpcException) t.getCause();
    assertThat(e.code()).isEqualTo(Code.INTERNAL);
    assertThat(e.getMessage())
        .isEqualTo("peer " + inbound.hostPort() + " was not made by this tchannel transport");
  }

  /**
   * A connects to B advertising its inbound's address; B's outbound to A then reuses that connection
   * instead of dialling, and B's calls to A are served by A's inbound on the connection A dialled.
   */
  @Test
  void connectionsWorkInBothDirections() throws Exception {
    TChannelTransport ta = TChannelTransport.of("svc-a");
    TChannelInbound inA = ta.inbound();
    server("svc-a", inA, new CountDownLatch(0));
    TChannelTransport tb = TChannelTransport.of("svc-b");
    TChannelInbound inB = tb.inbound();
    server("svc-b", inB, new CountDownLatch(0));

    TChannelOutbound aToB = started(ta.singleOutbound(inB.hostPort()));
    assertThat(new String(call(aToB, "svc-b", "who"), UTF_8)).isEqualTo("svc-b");
    TChannelOutbound bToA = started(tb.singleOutbound(inA.hostPort()));
    assertThat(new String(call(bToA, "svc-a", "who"), UTF_8)).isEqualTo("svc-a");
    assertThat(inA.acceptedConnections()).as("B did not dial A").isZero();
    assertThat(inB.acceptedConnections()).isEqualTo(1);
    assertThat(tb.peer(inA.hostPort()).connection().isInitiator())
        .as("B uses the connection A dialled")
        .isFalse();
  }

  @Test
  void roundRobinOverTwoServers() throws Exception {
    TChannelTransport t1 = TChannelTransport.of("svc");
    TChannelInbound in1 = t1.inbound();
    server("svc", in1, new CountDownLatch(0))
        .register(Raw.procedure("where", b -> "one".getBytes(UTF_8)));
    TChannelTransport t2 = TChannelTransport.of("svc");
    TChannelInbound in2 = t2.inbound();
    server("svc", in2, new CountDownLatch(0))
        .register(Raw.procedure("where", b -> "two".getBytes(UTF_8)));

    TChannelTransport clientTransport = TChannelTransport.of("client");
    RoundRobinPeerList list =
        RoundRobinPeerList.builder(clientTransport)
            .peers(List.of(in1.hostPort(), in2.hostPort()))
            .build();
    Dispatcher client =
        Dispatcher.builder("client")
            .outbound("svc", Outbounds.unary(clientTransport.outbound(list)))
            .build();
    client.start();
    cleanup.add(client::stop);
    Set<String> seen = new HashSet<>();
    RawClient raw = RawClient.of(client.clientConfig("svc"));
    // round robin over the peers that are available: the second connection may come up a little
    // later on a loaded machine, so call until both answered (bounded)
    for (int i = 0; i < 200 && seen.size() < 2; i++) {
      seen.add(
          new String(
              raw.call("where", new byte[0], CallOptions.timeout(WAIT)).get(10, TimeUnit.SECONDS),
              UTF_8));
      if (seen.size() < 2 && i >= 10) {
        Thread.sleep(10);
      }
    }
    assertThat(seen).containsExactlyInAnyOrder("one", "two");
    assertThat(clientTransport.peer(in1.hostPort()).status()).isEqualTo(ConnectionStatus.AVAILABLE);
  }
}
