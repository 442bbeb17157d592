package io.yarpc.testing;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.yarpc.ClientConfig;
import io.yarpc.Dispatcher;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.ClientStream;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.ServerStream;
import io.yarpc.transport.StreamMessage;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What the in-memory transport promises beyond the conformance kit. */
class InMemoryTransportTest {
  private InMemoryTransport transport;
  private Dispatcher server;
  private Dispatcher client;
  private final BodyTracker sent = new BodyTracker();

  private ClientConfig start(InMemoryTransport t, Procedure... procedures) {
    transport = t;
    server = Dispatcher.builder("server").inbound(t.inbound()).build();
    server.register(procedures);
    server.start();
    client = Dispatcher.builder("client").outbound("server", t.outbounds()).build();
    client.start();
    return client.clientConfig("server");
  }

  @AfterEach
  void stop() {
    if (client != null) {
      client.stop();
    }
    if (server != null) {
      server.stop();
    }
    sent.assertAllReleased();
    if (transport != null) {
      transport.assertNoLeaks();
      assertThat(transport.bodyTracker().released()).isEqualTo(transport.bodyTracker().allocated());
    }
  }

  private static RequestMeta meta(String procedure) {
    return RequestMeta.builder()
        .procedure(procedure)
        .encoding("raw")
        .deadline(Deadline.after(Duration.ofSeconds(10)))
        .build();
  }

  private static <T> T get(CompletableFuture<T> f) throws Exception {
    return f.get(10, TimeUnit.SECONDS);
  }

  private static Throwable failure(CompletableFuture<?> f) throws Exception {
    try {
      Object v = f.get(10, TimeUnit.SECONDS);
      throw new AssertionError("expected a failure, got " + v);
    } catch (ExecutionException e) {
      return e.getCause();
    }
  }

  @Test
  void theServerGetsAFreshBodyInBoundedDirectViewsAndTheClientsBodyIsReleased() throws Exception {
    AtomicReference<Body> seen = new AtomicReference<>();
    AtomicReference<List<ByteBuffer>> views = new AtomicReference<>();
    AtomicReference<Deadline> serverDeadline = new AtomicReference<>();
    AtomicReference<String> serverTransport = new AtomicReference<>();
    ClientConfig cc =
        start(
            InMemoryTransport.builder().maxBufferSize(1000).build(),
            Procedure.builder("look")
                .unary(
                    request -> {
                      seen.set(request.body());
                      views.set(request.body().byteBuffers());
                      serverDeadline.set(request.deadline());
                      serverTransport.set(request.meta().transport());
                      return CompletableFuture.completedFuture(
                          Response.of(Body.of(request.body().toByteArray())));
                    })
                .build());
    byte[] bytes = new byte[2500];
    bytes[2499] = 42;
    Body mine = sent.track(Body.of(bytes), "client request");
    RequestMeta meta = meta("look");
    Response response = get(cc.call(Request.of(meta, mine)));
    try {
      assertThat(mine.isReleased()).as("the client's body was released once sent").isTrue();
      assertThat(seen.get()).isNotSameAs(mine);
      assertThat(seen.get().isReleased()).as("the invocation released the server's body").isTrue();
      assertThat(views.get()).extracting(ByteBuffer::remaining).containsExactly(1000, 1000, 500);
      assertThat(views.get()).allMatch(ByteBuffer::isDirect).allMatch(ByteBuffer::isReadOnly);
      assertThat(serverDeadline.get()).isNotNull().isNotSameAs(meta.deadline());
      assertThat(serverDeadline.get().compareTo(meta.deadline()))
          .as("the server's deadline is not earlier than the TTL allows")
          .isGreaterThanOrEqualTo(0);
      assertThat(serverTransport.get()).isEqualTo(InMemoryTransport.NAME);
      assertThat(response.body().hasByteAccess()).isTrue();
      assertThat(response.body().toByteArray()).isEqualTo(bytes);
    } finally {
      response.body().release();
    }
  }

  @Test
  void heapBuffersOnRequest() throws Exception {
    AtomicReference<Boolean> direct = new AtomicReference<>();
    ClientConfig cc =
        start(
            InMemoryTransport.builder().directBuffers(false).build(),
            Procedure.builder("look")
                .unary(
                    request -> {
                      direct.set(request.body().byteBuffers().get(0).isDirect());
                      return CompletableFuture.completedFuture(Response.of(Body.empty()));
                    })
                .build());
    get(cc.call(Request.of(meta("look"), Body.of(new byte[] {1, 2, 3})))).body().release();
    assertThat(direct.get()).isFalse();
  }

  @Test
  void errorsCrossAsNewExceptionsWithCodeMessageNameAndDetails() throws Exception {
    YarpcException thrown =
        YarpcException.of(Code.DATA_LOSS, "lost it")
            .withName("Lost")
            .withDetails(new byte[] {1, 2, 3});
    ClientConfig cc =
        start(
            InMemoryTransport.create(),
            Procedure.builder("fail")
                .unary(request -> CompletableFuture.failedFuture(thrown))
                .build());
    Throwable t = failure(cc.call(Request.of(meta("fail"), Body.empty())));
    assertThat(t).isInstanceOf(YarpcException.class).isNotSameAs(thrown).isEqualTo(thrown);
    YarpcException e = (YarpcException) t;
    assertThat(e.details()).containsExactly(1, 2, 3).isNotSameAs(thrown.details());
    assertThat(e.getCause()).isNull();
  }

  @Test
  void aUnaryCallToAOnewayProcedureIsUnimplemented() throws Exception {
    ClientConfig cc = start(InMemoryTransport.create(), Raw.onewayProcedure("fire", body -> {}));
    Throwable t = failure(cc.call(Request.of(meta("fire"), Body.empty())));
    assertThat(((YarpcException) t).code()).isEqualTo(Code.UNIMPLEMENTED);
    assertThat(t)
        .hasMessage(
            "procedure \"fire\" of service \"server\" is a Oneway procedure and cannot serve a Unary call");
  }

  @Test
  void aOnewayCallTheStoppingDispatcherRefusesIsNotAcknowledged() throws Exception {
    CountDownLatch inHandler = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    ClientConfig cc =
        start(
            InMemoryTransport.create(),
            Raw.procedure(
                "hold",
                body -> {
                  inHandler.countDown();
                  finish.await(10, TimeUnit.SECONDS);
                  return body;
                }),
            Raw.onewayProcedure("fire", body -> {}));
    CompletableFuture<Response> held =
        cc.call(Request.of(meta("hold"), sent.track(Body.of(new byte[] {1}), "held request")));
    assertThat(inHandler.await(10, TimeUnit.SECONDS)).isTrue();
    Thread stopping = new Thread(server::stop, "stopping the server");
    stopping.start();
    try {
      String refusal = null;
      long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (refusal == null && System.nanoTime() < giveUp) { // until the drain has begun
        try {
          get(cc.callOneway(Request.of(meta("fire"), sent.track(Body.empty(), "oneway request"))));
          Thread.sleep(5);
        } catch (ExecutionException e) {
          refusal = e.getCause().getMessage();
          assertThat(((YarpcException) e.getCause()).code()).isEqualTo(Code.UNAVAILABLE);
        }
      }
      assertThat(refusal).isEqualTo("dispatcher \"server\" is stopping and takes no new calls");
    } finally {
      finish.countDown();
      stopping.join(10_000);
    }
    get(held).body().release();
  }

  @Test
  void callsFailWithUnavailableWhenNoInboundRuns() throws Exception {
    transport = InMemoryTransport.create();
    client = Dispatcher.builder("client").outbound("server", transport.outbounds()).build();
    client.start();
    Body body = sent.track(Body.of(new byte[] {1}), "request");
    Throwable t = failure(client.clientConfig("server").call(Request.of(meta("x"), body)));
    assertThat(((YarpcException) t).code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(body.isReleased()).isTrue();
  }

  @Test
  void onlyOneInboundRunsPerTransport() {
    InMemoryTransport t = InMemoryTransport.create();
    server = Dispatcher.builder("server").inbound(t.inbound()).build();
    server.start();
    Dispatcher second = Dispatcher.builder("other").inbound(t.inbound()).build();
    assertThatThrownBy(second::start).hasMessageContaining("already running");
  }

  @Test
  void streamFlowControlFollowsTheWindow() throws Exception {
    CompletableFuture<ServerStream> serverEnd = new CompletableFuture<>();
    CompletableFuture<Void> done = new CompletableFuture<>();
    ClientConfig cc =
        start(
            InMemoryTransport.create(),
            Procedure.builder("s")
                .streaming(
                    stream -> {
                      serverEnd.complete(stream);
                      return done;
                    })
                .build());
    ClientStream stream =
        get(cc.callStream(RequestMeta.builder().procedure("s").encoding("raw").build()));
    ServerStream srv = get(serverEnd);

    CompletableFuture<Void> first =
        srv.send(StreamMessage.of(sent.track(Body.of(new byte[] {1}), "m1")));
    get(first); // fits in the window of one message
    CompletableFuture<Void> second =
        srv.send(StreamMessage.of(sent.track(Body.of(new byte[] {2}), "m2")));
    Throwable misuse =
        failure(srv.send(StreamMessage.of(sent.track(Body.of(new byte[] {3}), "m3"))));
    assertThat(misuse)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("already pending");
    assertThat(second).as("second send waits: the window is full").isNotDone();

    StreamMessage m1 = get(stream.receive());
    assertThat(m1.body().toByteArray()).containsExactly(1);
    m1.release();
    get(second); // the receive made room
    StreamMessage m2 = get(stream.receive());
    assertThat(m2.body().toByteArray()).containsExactly(2);
    m2.release();

    assertThatThrownBy(() -> srv.sendHeaders(io.yarpc.transport.Headers.of("k", "v")))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("before the first message");

    stream.halfClose();
    Throwable afterClose =
        failure(stream.send(StreamMessage.of(sent.track(Body.of(new byte[] {4}), "late"))));
    assertThat(afterClose).isInstanceOf(IllegalStateException.class);
    assertThat(get(srv.receive())).as("the server sees the half-close").isNull();
    done.complete(null);
    assertThat(get(stream.receive())).as("end of stream").isNull();
  }

  @Test
  void aZeroWindowMakesEverySendWaitForAReceive() throws Exception {
    CompletableFuture<ServerStream> serverEnd = new CompletableFuture<>();
    CompletableFuture<Void> done = new CompletableFuture<>();
    ClientConfig cc =
        start(
            InMemoryTransport.builder().streamWindow(0).build(),
            Procedure.builder("s")
                .streaming(
                    stream -> {
                      serverEnd.complete(stream);
                      return done;
                    })
                .build());
    ClientStream stream =
        get(cc.callStream(RequestMeta.builder().procedure("s").encoding("raw").build()));
    ServerStream srv = get(serverEnd);
    CompletableFuture<Void> send =
        srv.send(StreamMessage.of(sent.track(Body.of("x".getBytes(UTF_8)), "m")));
    assertThat(send).isNotDone();
    get(stream.receive()).release();
    get(send);
    stream.cancel();
    assertThat(((YarpcException) failure(srv.receive())).code()).isEqualTo(Code.CANCELLED);
    done.complete(null);
  }

  @Test
  void stoppingTheInboundFailsOpenStreamsWithUnavailable() throws Exception {
    CompletableFuture<Void> done = new CompletableFuture<>();
    ClientConfig cc =
        start(InMemoryTransport.create(), Procedure.builder("s").streaming(stream -> done).build());
    ClientStream stream =
        get(cc.callStream(RequestMeta.builder().procedure("s").encoding("raw").build()));
    server.inbounds().get(0).stop();
    assertThat(((YarpcException) failure(stream.receive())).code()).isEqualTo(Code.UNAVAILABLE);
    done.complete(null);
  }

  @Test
  void theTrackerReportsBodiesUsedAfterRelease() {
    BodyTracker tracker = new BodyTracker();
    Body body = tracker.track(Body.of(new byte[] {1}), "a body");
    body.release();
    body.release();
    assertThat(tracker.released()).isEqualTo(1);
    assertThatThrownBy(body::toByteArray).isInstanceOf(IllegalStateException.class);
    assertThat(tracker.violations())
        .singleElement()
        .asString()
        .contains("toByteArray() after release: a body");
    assertThatThrownBy(() -> tracker.assertAllReleased(Duration.ZERO))
        .hasMessageContaining("released bodies were used");
  }

  @Test
  void theTrackerListsBodiesNotReleased() {
    BodyTracker tracker = new BodyTracker();
    tracker.track(Body.empty(), "kept");
    assertThat(tracker.outstandingBodies()).containsExactly("kept");
    assertThatThrownBy(() -> tracker.assertAllReleased(Duration.ZERO))
        .hasMessageContaining("1 of 1 tracked bodies were not released")
        .hasMessageContaining("kept");
  }
}
