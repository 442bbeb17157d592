package io.yarpc.transport.grpc;

import static io.yarpc.transport.grpc.GrpcTestBed.WAIT;
import static io.yarpc.transport.grpc.GrpcTestBed.await;
import static io.yarpc.transport.grpc.GrpcTestBed.eventually;
import static io.yarpc.transport.grpc.GrpcTestBed.failure;
import static io.yarpc.transport.grpc.GrpcTestBed.meta;
import static io.yarpc.transport.grpc.GrpcTestBed.streamMeta;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.yarpc.Call;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.peer.ConnectionStatus;
import io.yarpc.peer.Peer;
import io.yarpc.peer.PeerSubscriber;
import io.yarpc.peer.RoundRobinPeerList;
import io.yarpc.peer.SinglePeerChooser;
import io.yarpc.transport.Body;
import io.yarpc.transport.ClientStream;
import io.yarpc.transport.Headers;
import io.yarpc.transport.InboundLimits;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Request;
import io.yarpc.transport.Response;
import io.yarpc.transport.StreamMessage;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Message size limits, compression, graceful stop, peers and lifecycle of the gRPC transport's inbound
 * and outbound.
 */
class GrpcLimitsAndLifecycleTest {
  private static final int KIB = 1024;

  private final AtomicInteger releases = new AtomicInteger();
  private GrpcTestBed bed;

  @AfterEach
  void close() throws Exception {
    if (bed != null) {
      bed.close();
    }
  }

  private Body counted(int size) {
    return Body.ofBuffers(List.of(ByteBuffer.allocate(size)), releases::incrementAndGet);
  }

  private static Procedure echo() {
    return Procedure.builder("echo")
        .encoding("raw")
        .unary(
            request ->
                CompletableFuture.completedFuture(
                    Response.of(Body.of(request.body().toByteArray()))))
        .build();
  }

  private Procedure sized() {
    return Procedure.builder("sized")
        .encoding("raw")
        .unary(
            request -> {
              int size = ByteBuffer.wrap(request.body().toByteArray()).getInt();
              return CompletableFuture.completedFuture(Response.of(counted(size)));
            })
        .build();
  }

  private static Body size(int n) {
    return Body.of(ByteBuffer.allocate(4).putInt(n).array());
  }

  // ---- limits
  // -------------------------------------------------------------------------------------

  @Test
  void requestLargerThanTheInboundAcceptsIsResourceExhausted() throws Exception {
    bed =
        new GrpcTestBed(
            b -> b.limits(InboundLimits.builder().maxRequestSize(KIB).build()), b -> b, echo());
    Response ok = await(bed.clientConfig().call(Request.of(meta("echo"), Body.of(new byte[KIB]))));
    ok.body().release();
    YarpcException e =
        failure(bed.clientConfig().call(Request.of(meta("echo"), Body.of(new byte[KIB + 1]))));
    assertThat(e.code()).isEqualTo(Code.RESOURCE_EXHAUSTED);
  }

  @Test
  void defaultRequestLimitIs64MiB() throws Exception {
    bed = new GrpcTestBed(echo());
    assertThat(InboundLimits.defaults().maxRequestSize()).isEqualTo(64 << 20);
    long tooLarge = InboundLimits.defaults().maxRequestSize() + 1L;
    Body lazy =
        Body.lazy(
            tooLarge,
            out -> {
              byte[] zeros = new byte[64 * KIB];
              for (long left = tooLarge; left > 0; left -= zeros.length) {
                out.write(zeros, 0, (int) Math.min(zeros.length, left));
              }
            });
    YarpcException e = failure(bed.clientConfig().call(Request.of(meta("echo"), lazy)));
    assertThat(e.code()).isEqualTo(Code.RESOURCE_EXHAUSTED);
  }

  @Test
  void requestLargerThanTheOutboundSendsIsRefusedAndReleased() throws Exception {
    bed = new GrpcTestBed(b -> b, b -> b.maxSendMessageSize(KIB), echo());
    Body body = counted(KIB + 1);
    YarpcException e = failure(bed.clientConfig().call(Request.of(meta("echo"), body)));
    assertThat(e.code()).isEqualTo(Code.RESOURCE_EXHAUSTED);
    assertThat(releases).hasValue(1);
    assertThat(bed.serverTransport.receiveStats().detached()).as("nothing was sent").isZero();
  }

  @Test
  void responseLargerThanTheInboundSendsIsResourceExhausted() throws Exception {
    bed = new GrpcTestBed(b -> b.maxSendMessageSize(KIB), b -> b, sized());
    Response ok = await(bed.clientConfig().call(Request.of(meta("sized"), size(KIB))));
    ok.body().release();
    YarpcException e = failure(bed.clientConfig().call(Request.of(meta("sized"), size(KIB + 1))));
    assertThat(e.code()).isEqualTo(Code.RESOURCE_EXHAUSTED);
    eventually("both response bodies released", () -> releases.get() == 2);
  }

  @Test
  void responseLargerThanTheOutboundAcceptsIsResourceExhausted() throws Exception {
    bed = new GrpcTestBed(b -> b, b -> b.maxReceiveMessageSize(KIB), sized());
    YarpcException e = failure(bed.clientConfig().call(Request.of(meta("sized"), size(KIB + 1))));
    assertThat(e.code()).isEqualTo(Code.RESOURCE_EXHAUSTED);
    eventually("the response body released", () -> releases.get() == 1);
  }

  @Test
  void streamMessageLargerThanTheSendLimitFailsTheSend() throws Exception {
    bed =
        new GrpcTestBed(
            b -> b,
            b -> b.maxSendMessageSize(KIB),
            Procedure.builder("sink")
                .encoding("raw")
                .streaming(
                    stream ->
                        stream
                            .receive()
                            .thenCompose(
                                m -> {
                                  if (m != null) {
                                    m.release();
                                  }
                                  return CompletableFuture.<Void>completedFuture(null);
                                }))
                .build());
    ClientStream stream = await(bed.clientConfig().callStream(streamMeta("sink")));
    YarpcException e = failure(stream.send(StreamMessage.of(counted(KIB + 1))));
    assertThat(e.code()).isEqualTo(Code.RESOURCE_EXHAUSTED);
    assertThat(releases).hasValue(1);
    stream.cancel();
  }

  // ---- streams: misuse
  // ----------------------------------------------------------------------------

  @Test
  void aSecondSendWhileOneIsPendingIsIllegal() throws Exception {
    CountDownLatch received = new CountDownLatch(1);
    bed =
        new GrpcTestBed(
            Procedure.builder("slow-sink")
                .encoding("raw")
                .streaming(
                    stream -> {
                      CompletableFuture<Void> end = new CompletableFuture<>();
                      Call.current()
                          .onCancel(() -> end.complete(null)); // ends when the client cancels
                      stream
                          .receive()
                          .thenAccept(
                              m -> {
                                m.release();
                                received
                                    .countDown(); // and never receives again: the client's window
                                // fills up
                              });
                      return end;
                    })
                .build());
    ClientStream stream = await(bed.clientConfig().callStream(streamMeta("slow-sink")));
    await(stream.send(StreamMessage.of(Body.of(new byte[1]))));
    assertThat(received.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    // Send until a send is pending when the next one comes: at the latest once flow control stops
    // the sender for good (nobody receives), every further send is refused.
    CompletableFuture<Void> last = CompletableFuture.completedFuture(null);
    Body refused = null;
    for (int i = 0; i < 2000 && refused == null; i++) {
      Body next = i % 2 == 0 ? Body.of(new byte[64 * KIB]) : counted(10);
      boolean pending = !last.isDone();
      try {
        last = stream.send(StreamMessage.of(next));
      } catch (IllegalStateException expected) {
        assertThat(pending).as("refused only while a send is pending").isTrue();
        refused = next;
      }
    }
    assertThat(refused).as("a send refused while another was pending").isNotNull();
    assertThat(refused.isReleased()).as("the refused message was released").isTrue();
    stream.cancel();
    last.handle((v, e) -> null).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
  }

  @Test
  void anAbandonedReceiveLosesNoMessage() throws Exception {
    CountDownLatch go = new CountDownLatch(1);
    bed =
        new GrpcTestBed(
            Procedure.builder("later")
                .encoding("raw")
                .streaming(
                    stream -> {
                      try {
                        go.await(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                        return stream.send(StreamMessage.of(Body.of(new byte[] {1, 2, 3})));
                      } catch (InterruptedException e) {
                        return CompletableFuture.failedFuture(e);
                      }
                    })
                .build());
    ClientStream stream = await(bed.clientConfig().callStream(streamMeta("later")));
    CompletableFuture<StreamMessage> abandoned = stream.receive();
    abandoned.cancel(false); // e.g. a caller's own timeout
    go.countDown();
    StreamMessage m = await(stream.receive());
    try {
      assertThat(m.body().toByteArray()).containsExactly(1, 2, 3);
    } finally {
      m.release();
    }
    assertThat(await(stream.receive())).isNull();
  }

  @Test
  void streamHeadersReachTheClient() throws Exception {
    AtomicReference<String> seen = new AtomicReference<>();
    bed =
        new GrpcTestBed(
            Procedure.builder("hdr")
                .encoding("raw")
                .streaming(
                    stream -> {
                      seen.set(stream.meta().headers().get("x-text"));
                      stream.sendHeaders(Headers.of("X-Back", "value back"));
                      return CompletableFuture.completedFuture(null);
                    })
                .build());
    ClientStream stream =
        await(
            bed.clientConfig()
                .callStream(
                    streamMeta("hdr").toBuilder().headers(Headers.of("x-text", "hello")).build()));
    stream.halfClose();
    assertThat(await(stream.headers()).get("x-back")).isEqualTo("value back");
    assertThat(await(stream.receive())).isNull();
    assertThat(seen.get()).isEqualTo("hello");
  }

  @Test
  void nonAsciiHeaderValuesAreRefusedBeforeSending() throws Exception {
    bed = new GrpcTestBed(echo());
    Body body = counted(1);
    YarpcException e =
        failure(
            bed.clientConfig()
                .call(
                    Request.of(
                        meta("echo").toBuilder().headers(Headers.of("x-text", "héllo")).build(),
                        body)));
    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(releases).hasValue(1);
  }

  // ---- graceful stop
  // ------------------------------------------------------------------------------

  @Test
  void stopLetsCallsInFlightFinish() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch proceed = new CountDownLatch(1);
    bed =
        new GrpcTestBed(
            Procedure.builder("wait")
                .encoding("raw")
                .unary(
                    request -> {
                      started.countDown();
                      try {
                        proceed.await(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                      } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                      }
                      return CompletableFuture.completedFuture(
                          Response.of(Body.of(new byte[] {42})));
                    })
                .build());
    CompletableFuture<Response> inFlight =
        bed.clientConfig().call(Request.of(meta("wait"), Body.of(new byte[1])));
    assertThat(started.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    CompletableFuture<Void> stopped = CompletableFuture.runAsync(bed.inbound::stop);
    eventually("the inbound to begin stopping", bed.inbound::isShuttingDown);
    assertThat(stopped).as("stop waits for the call in flight").isNotDone();
    proceed.countDown();
    Response r = await(inFlight);
    try {
      assertThat(r.body().toByteArray()).containsExactly(42);
    } finally {
      r.body().release();
    }
    await(stopped);
  }

  @Test
  void stopCancelsCallsThatOutliveTheGracePeriod() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch cancelled = new CountDownLatch(1);
    Queue<Body> requests = new ConcurrentLinkedQueue<>();
    bed =
        new GrpcTestBed(
            b -> b.gracePeriod(Duration.ZERO),
            b -> b,
            Procedure.builder("stuck")
                .encoding("raw")
                .unary(
                    request -> {
                      requests.add(request.body());
                      CompletableFuture<Response> result = new CompletableFuture<>();
                      // runs until cancelled; then it ends its future, as a handler must (the body
                      // is released then)
                      Call.current()
                          .onCancel(
                              () -> {
                                cancelled.countDown();
                                result.completeExceptionally(
                                    new java.util.concurrent.CancellationException());
                              });
                      started.countDown();
                      return result;
                    })
                .build());
    CompletableFuture<Response> inFlight =
        bed.clientConfig().call(Request.of(meta("stuck"), Body.of(new byte[10])));
    assertThat(started.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    bed.inbound.stop();
    assertThat(cancelled.await(WAIT.toMillis(), TimeUnit.MILLISECONDS))
        .as("the handler's call was cancelled")
        .isTrue();
    YarpcException e = failure(inFlight);
    assertThat(e.code()).isIn(Code.CANCELLED, Code.UNAVAILABLE);
    eventually("the request body released", () -> requests.peek().isReleased());
  }

  // ---- peers and lifecycle
  // ------------------------------------------------------------------------

  @Test
  void roundRobinOverTwoInbounds() throws Exception {
    GrpcTransport serverTransport = GrpcTransport.create();
    Queue<String> servedBy = new ConcurrentLinkedQueue<>();
    Dispatcher[] servers = new Dispatcher[2];
    String[] peers = new String[2];
    for (int i = 0; i < 2; i++) {
      GrpcInbound in = serverTransport.inbound(new InetSocketAddress("127.0.0.1", 0));
      servers[i] = Dispatcher.builder("rr").inbound(in).build();
      String name = "server-" + i;
      servers[i].register(
          Procedure.builder("who")
              .encoding("raw")
              .unary(
                  request -> {
                    servedBy.add(name);
                    return CompletableFuture.completedFuture(Response.of(Body.empty()));
                  })
              .build());
      servers[i].start();
      peers[i] = "127.0.0.1:" + in.port();
    }
    GrpcTransport clientTransport = GrpcTransport.create();
    RoundRobinPeerList list =
        RoundRobinPeerList.builder(clientTransport).peers(List.of(peers)).build();
    GrpcOutbound outbound = clientTransport.outbound(list);
    Dispatcher client =
        Dispatcher.builder("rr-client").outbound("rr", Outbounds.unary(outbound)).build();
    client.start();
    try {
      // both channels connected first: calls made while one still connects all go to the other
      eventually("both peers available", () -> list.availablePeers().size() == 2);
      for (int i = 0; i < 10; i++) {
        await(client.clientConfig("rr").call(Request.of(meta("who"), Body.empty())))
            .body()
            .release();
      }
      assertThat(servedBy).contains("server-0", "server-1");
      assertThat(clientTransport.peerCount()).isEqualTo(2);
    } finally {
      client.stop();
      for (Dispatcher d : servers) {
        d.stop();
      }
    }
    assertThat(clientTransport.peerCount())
        .as("the list released its peers, closing their channels")
        .isZero();
  }

  @Test
  void peersAreRefCountedAndFollowTheChannel() throws Exception {
    bed = new GrpcTestBed(echo());
    GrpcTransport t = GrpcTransport.create();
    t.start();
    String id = "127.0.0.1:" + bed.inbound.port();
    CountDownLatch available = new CountDownLatch(1);
    PeerSubscriber a =
        p -> {
          if (p.status() == ConnectionStatus.AVAILABLE) {
            available.countDown();
          }
        };
    PeerSubscriber b = p -> {};
    Peer first = t.retainPeer(id, a);
    Peer second = t.retainPeer(id, b);
    assertThat(second).isSameAs(first);
    assertThat(available.await(WAIT.toMillis(), TimeUnit.MILLISECONDS))
        .as("connected without any call")
        .isTrue();
    t.releasePeer(id, a);
    assertThat(t.peerCount()).isEqualTo(1);
    t.releasePeer(id, b);
    assertThat(t.peerCount()).isZero();
    assertThat(first.status()).isEqualTo(ConnectionStatus.UNAVAILABLE);
    assertThatThrownBy(() -> t.releasePeer(id, b)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> t.retainPeer("no-port", a))
        .isInstanceOf(IllegalArgumentException.class);
    t.stop();
    assertThatThrownBy(() -> t.retainPeer(id, a))
        .isInstanceOf(YarpcException.class)
        .hasMessage(
            "grpc transport is not running"); // unavailable, as every stopped component says
  }

  @Test
  void unreachablePeerIsUnavailable() throws Exception {
    GrpcTransport t = GrpcTransport.create();
    int port;
    try (java.net.ServerSocket s =
        new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    // fail-fast: the transport's own error for a refused connection (a waiting chooser, the
    // default,
    // waits for the peer until the deadline: examples' ClientBeforeServerTest)
    GrpcOutbound out =
        t.outbound(SinglePeerChooser.builder(t, "127.0.0.1:" + port).failFast(true).build());
    Dispatcher client =
        Dispatcher.builder("lonely").outbound("nobody", Outbounds.unary(out)).build();
    client.start();
    try {
      Body body = counted(3);
      YarpcException e = failure(client.clientConfig("nobody").call(Request.of(meta("x"), body)));
      assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
      eventually("the request body released", () -> releases.get() == 1);
    } finally {
      client.stop();
    }
  }

  @Test
  void outboundThatIsNotRunningRefusesCalls() throws Exception {
    GrpcTransport t = GrpcTransport.create();
    GrpcOutbound out = t.singleOutbound("127.0.0.1:1");
    Body body = counted(3);
    YarpcException e = failure(out.call(Request.of(meta("x"), body)));
    assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(releases).hasValue(1);
    assertThat(failure(out.callStream(streamMeta("x"))).code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(out.transportName()).isEqualTo("grpc");
    assertThat(out.transports()).containsExactly(t);
  }

  @Test
  void inboundAddressAndLifecycle() {
    GrpcTransport t = GrpcTransport.create();
    GrpcInbound in = t.inbound(new InetSocketAddress("127.0.0.1", 0));
    assertThatThrownBy(in::address).isInstanceOf(IllegalStateException.class);
    in.setRouter(Dispatcher.builder("router-only").build().router());
    in.start();
    in.start(); // idempotent
    assertThat(in.address().getAddress().isLoopbackAddress()).isTrue();
    assertThat(in.port()).isPositive();
    assertThat(in.transportName()).isEqualTo("grpc");
    in.stop();
    in.stop(); // idempotent
    t.stop();
  }
}
