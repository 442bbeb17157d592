package io.yarpc.transport.grpc;

import static io.yarpc.transport.grpc.RawH2Client.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.netty.GrpcNettyAllocator;
import io.netty.handler.codec.http2.Http2Headers;
import io.yarpc.Call;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.testing.MemoryBaseline;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.DeadlinePolicy;
import io.yarpc.transport.Headers;
import io.yarpc.transport.InboundLimits;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.StreamMessage;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Attacks on the gRPC inbound over real loopback sockets, each with small {@link InboundLimits} so it
 * runs in a second or two: a hand-written HTTP/2 client ({@link RawH2Client}) misbehaves where
 * grpc-java's client would not. Every test asserts (a) the limit fired with the protocol's answer
 * (GOAWAY or RST_STREAM code, gRPC status), (b) a normal call on a fresh connection succeeds afterwards,
 * (c) the server's memory is back to its baseline (retained heap and pooled buffers in use, plus
 * paranoid leak detection and no received body left unreleased) and (d) the calls within the limits
 * completed.
 */
class GrpcInboundAttackTest {
  private static final String SERVER = "attacked";
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final int KIB = 1024;
  private static final long SLACK = 8L << 20;

  private static final int OK = 0;
  private static final int INVALID_ARGUMENT = 3;
  private static final int DEADLINE_EXCEEDED = 4;
  private static final int RESOURCE_EXHAUSTED = 8;

  private GrpcTransport transport;
  private GrpcInbound inbound;
  private Dispatcher server;
  private Dispatcher bystander;
  private final List<RawH2Client> raw = new ArrayList<>();
  private final AtomicInteger parked = new AtomicInteger();
  private final AtomicInteger maxParked = new AtomicInteger();
  private final CompletableFuture<Void> unpark = new CompletableFuture<>();
  private final AtomicInteger floodsEnded = new AtomicInteger();
  private final AtomicInteger sinksEnded = new AtomicInteger();

  /** The executor grpc-java runs call events on; null: the inbound's direct executor. */
  private ExecutorService callEvents;

  /** Call events {@link #callEvents} ran. */
  private final AtomicInteger callEventsRun = new AtomicInteger();

  @AfterEach
  void stop() throws Exception {
    try {
      unpark.complete(null);
      for (RawH2Client c : raw) {
        c.close();
      }
      if (bystander != null) {
        bystander.stop();
      }
      if (server != null) {
        server.stop();
        assertThat(transport.receiveStats().outstanding())
            .as("received bodies released: %s", transport.receiveStats())
            .isZero();
      }
    } finally {
      if (callEvents != null) {
        callEvents.shutdownNow();
      }
    }
  }

  // ---- the server

  private void start(InboundLimits limits) {
    start(limits, b -> b);
  }

  private void start(InboundLimits limits, UnaryOperator<GrpcInbound.Builder> options) {
    transport =
        callEvents == null
            ? GrpcTransport.create()
            : GrpcTransport.builder()
                .executor(
                    task -> {
                      callEventsRun.incrementAndGet();
                      callEvents.execute(task);
                    })
                .build();
    inbound =
        options
            .apply(
                transport
                    .inboundBuilder(new InetSocketAddress("127.0.0.1", 0))
                    .limits(limits)
                    .gracePeriod(Duration.ZERO))
            .build();
    server = Dispatcher.builder(SERVER).inbound(inbound).build();
    server.register(echo(), park(), big(), flood(), sink());
    server.start();
    GrpcTransport clientTransport = GrpcTransport.create();
    bystander =
        Dispatcher.builder("bystander")
            .outbound(
                SERVER,
                Outbounds.unary(clientTransport.singleOutbound("127.0.0.1:" + inbound.port())))
            .build();
    bystander.start();
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

  /** Holds the call until the test unparks it (or the call is cancelled). */
  private Procedure park() {
    return Procedure.builder("park")
        .encoding("raw")
        .unary(
            request -> {
              maxParked.accumulateAndGet(parked.incrementAndGet(), Math::max);
              CompletableFuture<Response> result = new CompletableFuture<>();
              Call.current()
                  .onCancel(() -> result.completeExceptionally(new CancellationException()));
              unpark.thenRun(() -> result.complete(Response.of(Body.of(new byte[] {1}))));
              return result.whenComplete((r, e) -> parked.decrementAndGet());
            })
        .build();
  }

  /** Answers with as many bytes as the request's first four say. */
  private static Procedure big() {
    return Procedure.builder("big")
        .encoding("raw")
        .unary(
            request -> {
              int size = ByteBuffer.wrap(request.body().toByteArray()).getInt();
              return CompletableFuture.completedFuture(Response.of(Body.of(new byte[size])));
            })
        .build();
  }

  /** A server stream that sends 64 KiB messages until a send fails. */
  private Procedure flood() {
    return Procedure.builder("flood")
        .encoding("raw")
        .streaming(
            stream -> {
              CompletableFuture<Void> end = new CompletableFuture<>();
              sendUntilRefused(stream, end);
              return end.whenComplete((v, e) -> floodsEnded.incrementAndGet());
            })
        .build();
  }

  /** A stream that receives (and drops) messages until the client's end, then answers one. */
  private Procedure sink() {
    return Procedure.builder("sink")
        .encoding("raw")
        .streaming(
            stream -> {
              CompletableFuture<Void> end = new CompletableFuture<>();
              receiveAll(stream, end);
              return end.whenComplete((v, e) -> sinksEnded.incrementAndGet());
            })
        .build();
  }

  private static void receiveAll(
      io.yarpc.transport.ServerStream stream, CompletableFuture<Void> end) {
    stream
        .receive()
        .whenComplete(
            (m, e) -> {
              if (e != null) {
                end.completeExceptionally(e);
              } else if (m == null) {
                stream
                    .send(StreamMessage.of(Body.of(new byte[] {7})))
                    .whenComplete((v, f) -> end.complete(null));
              } else {
                m.release();
                receiveAll(stream, end);
              }
            });
  }

  private static void sendUntilRefused(
      io.yarpc.transport.ServerStream stream, CompletableFuture<Void> end) {
    stream
        .send(StreamMessage.of(Body.of(new byte[64 * KIB])))
        .whenComplete(
            (v, e) -> {
              if (e != null) {
                end.completeExceptionally(e);
              } else {
                sendUntilRefused(stream, end);
              }
            });
  }

  // ---- helpers

  private static RequestMeta meta(String procedure) {
    return RequestMeta.builder()
        .procedure(procedure)
        .encoding("raw")
        .deadline(Deadline.after(WAIT))
        .build();
  }

  private static byte[] payload(int size) {
    byte[] b = new byte[size];
    for (int i = 0; i < size; i++) {
      b[i] = (byte) i;
    }
    return b;
  }

  /** A call of the bystander's (its own connection); asserts it succeeds. */
  private void bystanderCallSucceeds() throws Exception {
    byte[] sent = payload(100);
    Response r =
        bystander
            .clientConfig(SERVER)
            .call(Request.of(meta("echo"), Body.of(sent)))
            .get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    try {
      assertThat(r.body().toByteArray()).isEqualTo(sent);
    } finally {
      r.body().release();
    }
  }

  /** (b): a normal call from a new client, on a new connection, succeeds. */
  private void freshCallSucceeds() throws Exception {
    GrpcTransport t = GrpcTransport.create();
    Dispatcher d =
        Dispatcher.builder("fresh")
            .outbound(SERVER, Outbounds.unary(t.singleOutbound("127.0.0.1:" + inbound.port())))
            .build();
    d.start();
    try {
      byte[] sent = payload(1000);
      Response r =
          d.clientConfig(SERVER)
              .call(Request.of(meta("echo"), Body.of(sent)))
              .get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
      try {
        assertThat(r.body().toByteArray()).isEqualTo(sent);
      } finally {
        r.body().release();
      }
    } finally {
      d.stop();
    }
  }

  /** The baseline, taken once the server has served a few calls (its pools and caches exist). */
  private MemoryBaseline baseline() throws Exception {
    for (int i = 0; i < 3; i++) {
      bystanderCallSucceeds();
    }
    return MemoryBaseline.take(GrpcNettyAllocator.get());
  }

  private RawH2Client connect() throws Exception {
    return connect(Map.of());
  }

  private RawH2Client connect(Map<Integer, Long> settings) throws Exception {
    RawH2Client c = RawH2Client.connect(inbound.port(), settings);
    raw.add(c);
    return c;
  }

  private static Http2Headers headers(String procedure) {
    return RawH2Client.grpcHeaders(procedure, Map.of());
  }

  /** A complete unary call on {@code c}: headers, one message, end of stream. */
  private static int call(RawH2Client c, String procedure, byte[] body) {
    int id = c.request(headers(procedure), false);
    c.message(id, body, true);
    return id;
  }

  /** Streams the server refused on {@code c} ({@code RST_STREAM(REFUSED_STREAM)}). */
  private static long refused(RawH2Client c) {
    return c.resets.values().stream().filter(code -> code == RawH2Client.REFUSED_STREAM).count();
  }

  private static void awaitStatus(RawH2Client c, int stream) throws InterruptedException {
    c.waitFor("the status of stream " + stream, () -> c.grpcStatus(stream) != null);
  }

  /** Bystander calls running next to an attack; {@link #stopAndCheck} asserts they all succeeded. */
  private final class Bystanders {
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final AtomicInteger succeeded = new AtomicInteger();
    private final CompletableFuture<Void> done;

    Bystanders() {
      done =
          CompletableFuture.runAsync(
              () -> {
                try {
                  while (running.get()) {
                    bystanderCallSucceeds();
                    succeeded.incrementAndGet();
                  }
                } catch (Exception e) {
                  throw new AssertionError(e);
                }
              });
    }

    void stopAndCheck() throws Exception {
      running.set(false);
      done.get(WAIT.toMillis(), TimeUnit.MILLISECONDS); // fails if any call failed
      assertThat(succeeded).as("bystander calls during the attack").hasPositiveValue();
    }
  }

  // ---- resets

  @Test
  void clientRapidResetEndsInGoAway() throws Exception {
    start(InboundLimits.builder().maxRstFramesPerWindow(50, Duration.ofSeconds(30)).build());
    MemoryBaseline before = baseline();
    Bystanders bystanders = new Bystanders();

    // (d) resets within the limit: the connection stays, and its next call is served
    RawH2Client polite = connect();
    for (int i = 0; i < 20; i++) {
      polite.rst(polite.request(headers("park"), false), RawH2Client.CANCEL);
    }
    int after = call(polite, "echo", payload(10));
    awaitStatus(polite, after);
    assertThat(polite.grpcStatus(after)).isEqualTo(OK);
    assertThat(polite.goAways).isEmpty();

    // (a) CVE-2023-44487: open and reset at once, over and over
    RawH2Client attacker = connect();
    for (int i = 0; i < 5_000 && !attacker.ended() && !attacker.writeFailed(); i++) {
      attacker.rst(attacker.request(headers("park"), false), RawH2Client.CANCEL);
    }
    RawH2Client.GoAway goAway = attacker.awaitGoAway();
    assertThat(goAway.errorCode()).isEqualTo(RawH2Client.ENHANCE_YOUR_CALM);
    assertThat(goAway.debug()).contains("too_many_rststreams");
    assertThat(attacker.awaitEnd(WAIT)).as("the connection is closed").isTrue();

    bystanders.stopAndCheck();
    freshCallSucceeds();
    attacker.close();
    await("no call left in the handlers", () -> parked.get() == 0);
    before.awaitReturned(WAIT, SLACK);
  }

  @Test
  void serverProvokedResetEndsInGoAway() throws Exception {
    start(InboundLimits.builder().maxRstFramesPerWindow(50, Duration.ofSeconds(30)).build());
    MemoryBaseline before = baseline();
    Bystanders bystanders = new Bystanders();

    // (a) CVE-2025-55163 "MadeYouReset": a complete request (its handler runs), then a zero window
    // increment on its stream, which makes the server reset the stream
    RawH2Client attacker = connect();
    int first = -1;
    for (int i = 0; i < 5_000 && !attacker.ended() && !attacker.writeFailed(); i++) {
      int id = call(attacker, "park", payload(1));
      attacker.windowUpdate(id, 0);
      if (first < 0) {
        first = id;
      }
    }
    RawH2Client.GoAway goAway = attacker.awaitGoAway();
    assertThat(goAway.errorCode()).isEqualTo(RawH2Client.ENHANCE_YOUR_CALM);
    assertThat(goAway.debug()).contains("too_many_rststreams");
    assertThat(attacker.resets.get(first)).isEqualTo(RawH2Client.PROTOCOL_ERROR);
    assertThat(attacker.resets.size()).as("resets the server sent").isLessThanOrEqualTo(51);
    assertThat(attacker.awaitEnd(WAIT)).as("the connection is closed").isTrue();

    bystanders.stopAndCheck();
    freshCallSucceeds();
    attacker.close();
    await("no call left in the handlers", () -> parked.get() == 0);
    before.awaitReturned(WAIT, SLACK);
  }

  // ---- headers

  @Test
  void continuationFloodEndsInGoAway() throws Exception {
    start(InboundLimits.builder().maxHeaderBytes(4 * KIB).build());
    MemoryBaseline before = baseline();

    RawH2Client attacker = connect();
    int id = attacker.requestWithoutEndHeaders(headers("echo"));
    byte[] fragment = new byte[KIB];
    java.util.Arrays.fill(fragment, (byte) 0x40); // literal header fields, never ended
    for (int sent = 0; sent < (64 << 20) && !attacker.ended() && !attacker.writeFailed(); ) {
      attacker.continuation(id, fragment, false);
      sent += fragment.length;
    }
    RawH2Client.GoAway goAway = attacker.awaitGoAway();
    assertThat(goAway.errorCode()).isEqualTo(RawH2Client.PROTOCOL_ERROR);
    assertThat(goAway.debug()).startsWith("Header size exceeded max allowed size");
    assertThat(attacker.awaitEnd(WAIT)).isTrue();

    // (d) a call within the header limit on another connection
    RawH2Client polite = connect();
    int ok = call(polite, "echo", payload(10));
    awaitStatus(polite, ok);
    assertThat(polite.grpcStatus(ok)).isEqualTo(OK);

    freshCallSucceeds();
    attacker.close();
    before.awaitReturned(WAIT, SLACK);
  }

  @Test
  void healthAndReflectionCallsAreHeldToTheHeaderCountLimitToo() throws Exception {
    start(InboundLimits.builder().maxHeaderCount(40).build());
    RawH2Client c = connect();
    Map<String, String> many = new HashMap<>();
    for (int i = 0; i < 100; i++) {
      many.put("x-flood-" + i, "v");
    }
    for (String path :
        List.of(
            "/grpc.health.v1.Health/Check",
            "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
            "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo")) {
      int refused = c.request(RawH2Client.grpcHeaders("echo", many).path(path), false);
      c.message(refused, new byte[0], true);
      awaitStatus(c, refused);
      assertThat(c.grpcStatus(refused)).as(path).isEqualTo(RESOURCE_EXHAUSTED);
      assertThat(c.grpcMessage(refused)).as(path).contains("more than the limit of 40");
    }
    // within the limit, the health service answers (an empty HealthCheckRequest: the server's
    // health)
    int ok =
        c.request(
            RawH2Client.grpcHeaders("echo", Map.of()).path("/grpc.health.v1.Health/Check"), false);
    c.message(ok, new byte[0], true);
    awaitStatus(c, ok);
    assertThat(c.grpcStatus(ok)).isEqualTo(OK);
  }

  @Test
  void tooManyHeaderFieldsIsResourceExhausted() throws Exception {
    start(InboundLimits.builder().maxHeaderCount(40).build());
    MemoryBaseline before = baseline();

    RawH2Client c = connect();
    Map<String, String> many = new HashMap<>();
    for (int i = 0; i < 100; i++) {
      many.put("x-flood-" + i, "v");
    }
    int refused = c.request(RawH2Client.grpcHeaders("echo", many), false);
    c.message(refused, payload(10), true);
    awaitStatus(c, refused);
    assertThat(c.grpcStatus(refused)).isEqualTo(RESOURCE_EXHAUSTED);
    assertThat(c.grpcMessage(refused)).contains("more than the limit of 40");

    // (d) within the limit, on the same connection, which stays open
    Map<String, String> some = new HashMap<>();
    for (int i = 0; i < 30; i++) {
      some.put("x-some-" + i, "v");
    }
    int ok = c.request(RawH2Client.grpcHeaders("echo", some), false);
    c.message(ok, payload(10), true);
    awaitStatus(c, ok);
    assertThat(c.grpcStatus(ok)).isEqualTo(OK);
    assertThat(c.goAways).isEmpty();

    // what a YARPC client gets
    Map<String, String> appHeaders = new HashMap<>();
    for (int i = 0; i < 100; i++) {
      appHeaders.put("x-app-" + i, "v");
    }
    CompletableFuture<Response> f =
        bystander
            .clientConfig(SERVER)
            .call(
                Request.of(
                    meta("echo").toBuilder().headers(Headers.fromMap(appHeaders)).build(),
                    Body.of(payload(10))));
    assertThat(failure(f).code()).isEqualTo(Code.RESOURCE_EXHAUSTED);

    freshCallSucceeds();
    before.awaitReturned(WAIT, SLACK);
  }

  @Test
  void headerBlockOverTheByteLimitIsRefused() throws Exception {
    start(InboundLimits.builder().maxHeaderBytes(4 * KIB).build());
    MemoryBaseline before = baseline();

    RawH2Client c = connect();
    assertThat(c.serverSettings.get(RawH2Client.SETTINGS_MAX_HEADER_LIST_SIZE))
        .as("announced")
        .isEqualTo(4L * KIB);
    int refused =
        c.request(RawH2Client.grpcHeaders("echo", Map.of("x-big", "v".repeat(4600))), true);
    c.waitFor("the refusal", () -> c.resets.containsKey(refused) || c.lastHeaders(refused) != null);
    Http2Headers answer = c.lastHeaders(refused);
    assertThat(answer).isNotNull();
    assertThat(answer.status().toString()).isEqualTo("431");
    c.waitFor("the reset", () -> c.resets.containsKey(refused));
    assertThat(c.resets.get(refused)).isEqualTo(RawH2Client.PROTOCOL_ERROR);

    // (d) within the limit, on the same connection, which stays open
    int ok = call(c, "echo", payload(10));
    awaitStatus(c, ok);
    assertThat(c.grpcStatus(ok)).isEqualTo(OK);
    assertThat(c.goAways).isEmpty();

    freshCallSucceeds();
    before.awaitReturned(WAIT, SLACK);
  }

  // ---- slow requests: the deadline and the read timeout start at the headers

  /**
   * The attack, scaled down: streams without {@code grpc-timeout}, each with 1 MiB of a 2 MiB
   * message, held on one connection. Only {@code maxConcurrentCallsPerConnection} are accepted; the read
   * timeout ends them with DEADLINE_EXCEEDED and releases what they received, while the connection stays.
   */
  @Test
  void partialMessagesWithoutDeadlineAreEndedByTheReadTimeout() throws Exception {
    start(
        InboundLimits.builder()
            .maxConcurrentCallsPerConnection(20)
            .readTimeout(Duration.ofSeconds(2))
            .build());
    MemoryBaseline before = baseline();
    Bystanders bystanders = new Bystanders();

    RawH2Client attacker = connect();
    assertThat(attacker.serverSettings.get(RawH2Client.SETTINGS_MAX_CONCURRENT_STREAMS))
        .isEqualTo(20L);
    List<Integer> streams = new ArrayList<>();
    for (int i = 0; i < 25; i++) {
      streams.add(attacker.request(headers("echo"), false));
    }
    attacker.waitFor("5 streams refused", () -> refused(attacker) == 5);
    assertThat(attacker.resets.values()).containsOnly(RawH2Client.REFUSED_STREAM);
    streams.removeAll(attacker.resets.keySet());
    for (int id : streams) {
      attacker.partialMessage(id, 2 << 20, 1 << 20, false); // 20 MiB held, were it not released
    }
    for (int id : streams) {
      awaitStatus(attacker, id);
      assertThat(attacker.grpcStatus(id)).isEqualTo(DEADLINE_EXCEEDED);
      assertThat(attacker.grpcMessage(id)).contains("read timeout of 2s");
    }
    attacker.waitFor("streams reset", () -> attacker.resets.keySet().containsAll(streams));
    // released while the attacker's connection is still open
    before.awaitReturned(WAIT, SLACK);

    // (d) a call within the limits on the same connection
    int ok = call(attacker, "echo", payload(10));
    awaitStatus(attacker, ok);
    assertThat(attacker.grpcStatus(ok)).isEqualTo(OK);
    assertThat(attacker.goAways).isEmpty();

    bystanders.stopAndCheck();
    freshCallSucceeds();
  }

  /**
   * The same attack on streams, which have no deadline by default: a message the handler asked for that
   * began to arrive must arrive whole within the read timeout; waiting between messages is not limited.
   */
  @Test
  void aStalledStreamMessageIsEndedByTheReadTimeout() throws Exception {
    start(InboundLimits.builder().readTimeout(Duration.ofSeconds(1)).build());
    MemoryBaseline before = baseline();

    RawH2Client attacker = connect();
    List<Integer> stalled = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      int id = attacker.request(headers("sink"), false);
      attacker.message(id, payload(100), false);
      attacker.partialMessage(id, 2 << 20, 1 << 20, false); // 10 MiB held, were it not released
      stalled.add(id);
    }
    // (d) a stream that pauses between whole messages for longer than the read timeout is served
    int idle = attacker.request(headers("sink"), false);
    attacker.message(idle, payload(100), false);
    Thread.sleep(1_500);
    attacker.message(idle, payload(100), true);

    for (int id : stalled) {
      awaitStatus(attacker, id);
      assertThat(attacker.grpcStatus(id)).isEqualTo(DEADLINE_EXCEEDED);
      assertThat(attacker.grpcMessage(id)).contains("did not arrive within the read timeout of 1s");
    }
    attacker.waitFor("streams reset", () -> attacker.resets.keySet().containsAll(stalled));
    await("their handlers ended", () -> sinksEnded.get() >= stalled.size());
    before.awaitReturned(WAIT, SLACK);
    awaitStatus(attacker, idle);
    assertThat(attacker.grpcStatus(idle)).isEqualTo(OK);
    assertThat(attacker.dataBytes.get(idle)).as("the answer").hasValue(6);
    freshCallSucceeds();
  }

  @Test
  void theDefaultTimeoutRunsFromTheHeaders() throws Exception {
    start(
        InboundLimits.defaults(),
        b -> b.deadlinePolicy(DeadlinePolicy.withDefaultTimeout(Duration.ofMillis(500))));
    MemoryBaseline before = baseline();

    RawH2Client attacker = connect();
    List<Integer> streams = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      int id = attacker.request(headers("echo"), false);
      attacker.partialMessage(id, 1 << 20, 64 * KIB, false);
      streams.add(id);
    }
    for (int id : streams) {
      awaitStatus(attacker, id);
      assertThat(attacker.grpcStatus(id)).isEqualTo(DEADLINE_EXCEEDED);
      assertThat(attacker.grpcMessage(id))
          .startsWith("call to procedure \"echo\" of service \"attacked\"")
          .endsWith("before its request arrived");
    }
    before.awaitReturned(WAIT, SLACK);

    // (d) a complete call in time
    int ok = call(attacker, "echo", payload(10));
    awaitStatus(attacker, ok);
    assertThat(attacker.grpcStatus(ok)).isEqualTo(OK);
    freshCallSucceeds();
  }

  @Test
  void aStrictPolicyRefusesAMissingDeadlineOnTheHeaders() throws Exception {
    start(InboundLimits.defaults(), b -> b.deadlinePolicy(DeadlinePolicy.strict()));
    MemoryBaseline before = baseline();

    RawH2Client attacker = connect();
    int id = attacker.request(headers("echo"), false);
    attacker.partialMessage(id, 1 << 20, 64 * KIB, false);
    awaitStatus(attacker, id); // without the rest of its message
    assertThat(attacker.grpcStatus(id)).isEqualTo(INVALID_ARGUMENT);
    assertThat(attacker.grpcMessage(id)).isEqualTo("missing TTL");

    // (d) with a deadline
    int ok = attacker.request(RawH2Client.grpcHeaders("echo", Map.of("grpc-timeout", "5S")), false);
    attacker.message(ok, payload(10), true);
    awaitStatus(attacker, ok);
    assertThat(attacker.grpcStatus(ok)).isEqualTo(OK);
    freshCallSucceeds();
    attacker.close();
    before.awaitReturned(WAIT, SLACK);
  }

  // ---- slow readers

  @Test
  void aReaderThatGrantsNoWindowIsResetAfterTheWriteTimeout() throws Exception {
    readerThatGrantsNoWindowIsReset();
  }

  /**
   * As {@link #aReaderThatGrantsNoWindowIsResetAfterTheWriteTimeout} on a server that runs call events
   * on an executor of its own: grpc-java then starts calls on another thread than the one that made
   * their stream tracers, which the inbound finds in the call's context instead.
   */
  @Test
  void aReaderThatGrantsNoWindowIsResetAfterTheWriteTimeoutWithAnExecutor() throws Exception {
    callEvents = Executors.newFixedThreadPool(2);
    readerThatGrantsNoWindowIsReset();
    assertThat(callEventsRun.get()).as("call events run on the transport's executor").isPositive();
  }

  private void readerThatGrantsNoWindowIsReset() throws Exception {
    start(InboundLimits.builder().writeTimeout(Duration.ofSeconds(1)).build());
    MemoryBaseline before = baseline();
    Bystanders bystanders = new Bystanders();

    RawH2Client reader = connect(Map.of(RawH2Client.SETTINGS_INITIAL_WINDOW_SIZE, 0L));
    List<Integer> unary = new ArrayList<>();
    for (int i = 0; i < 12; i++) { // 12 MiB of responses queued, were they not dropped
      unary.add(call(reader, "big", ByteBuffer.allocate(4).putInt(1 << 20).array()));
    }
    List<Integer> streams = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      int id = reader.request(headers("flood"), false);
      reader.message(id, new byte[0], true);
      streams.add(id);
    }
    for (int id : unary) {
      reader.waitFor("unary stream " + id + " reset", () -> reader.resets.containsKey(id));
      assertThat(reader.resets.get(id)).isEqualTo(RawH2Client.CANCEL);
    }
    for (int id : streams) {
      reader.waitFor("stream " + id + " reset", () -> reader.resets.containsKey(id));
      assertThat(reader.resets.get(id)).isEqualTo(RawH2Client.CANCEL);
    }
    await("the stream handlers ended", () -> floodsEnded.get() == streams.size());
    assertThat(reader.dataBytes).as("nothing could be written").isEmpty();
    // released while the reader's connection is still open
    before.awaitReturned(WAIT, SLACK);

    // (d) a response within the window the reader then grants
    reader.windowUpdate(0, 1 << 20);
    int ok = reader.request(headers("echo"), false);
    reader.windowUpdate(ok, 64 * KIB);
    reader.message(ok, payload(10), true);
    awaitStatus(reader, ok);
    assertThat(reader.grpcStatus(ok)).isEqualTo(OK);

    bystanders.stopAndCheck();
    freshCallSucceeds();
  }

  // ---- connections and calls

  @Test
  void connectionsBeyondTheLimitAreClosedAtOnce() throws Exception {
    start(
        InboundLimits.builder().maxConnections(3).handshakeTimeout(Duration.ofSeconds(1)).build());
    MemoryBaseline before = baseline(); // the bystander holds one connection
    await("the bystander's connection", () -> inbound.openConnections() == 1);

    RawH2Client first = connect();
    RawH2Client second = connect();
    assertThat(inbound.openConnections()).isEqualTo(3);

    RawH2Client refused = RawH2Client.open(inbound.port());
    raw.add(refused);
    refused.preface(Map.of());
    assertThat(refused.awaitEnd(WAIT)).as("closed at once").isTrue();
    assertThat(refused.serverSettings).as("nothing was read or sent").isEmpty();
    assertThat(inbound.refusedConnections()).isEqualTo(1);

    // (d) the connections within the limit serve calls
    for (RawH2Client c : List.of(first, second)) {
      int ok = call(c, "echo", payload(10));
      awaitStatus(c, ok);
      assertThat(c.grpcStatus(ok)).isEqualTo(OK);
    }
    bystanderCallSucceeds();

    // a closed connection frees its place; one that does not complete its handshake loses it
    second.close();
    await("2 connections", () -> inbound.openConnections() == 2);
    RawH2Client silent = RawH2Client.open(inbound.port()); // never sends its preface
    raw.add(silent);
    assertThat(silent.awaitEnd(WAIT)).as("closed after the handshake timeout").isTrue();
    assertThat(silent.goAways)
        .as("for sending nothing, not for what it sent")
        .allMatch(g -> g.errorCode() == RawH2Client.NO_ERROR);
    await("2 connections", () -> inbound.openConnections() == 2);
    freshCallSucceeds();
    assertThat(inbound.refusedConnections()).isEqualTo(1);
    before.awaitReturned(WAIT, SLACK);
  }

  @Test
  void pingFloodsAndIdleConnectionsAreSentAway() throws Exception {
    start(
        InboundLimits.builder()
            .idleTimeout(Duration.ofSeconds(1))
            .permitKeepAliveTime(Duration.ofMinutes(1))
            .build());
    MemoryBaseline before = baseline();

    RawH2Client pinger = connect();
    RawH2Client idle = connect();
    for (int i = 0; i < 10 && !pinger.ended() && !pinger.writeFailed(); i++) {
      pinger.ping();
    }
    RawH2Client.GoAway tooManyPings = pinger.awaitGoAway();
    assertThat(tooManyPings.errorCode()).isEqualTo(RawH2Client.ENHANCE_YOUR_CALM);
    assertThat(tooManyPings.debug()).isEqualTo("too_many_pings");
    assertThat(pinger.awaitEnd(WAIT)).isTrue();

    RawH2Client.GoAway idleGoAway = idle.awaitGoAway();
    assertThat(idleGoAway.errorCode()).isEqualTo(RawH2Client.NO_ERROR);
    assertThat(idle.awaitEnd(WAIT)).as("closed once idle").isTrue();

    // (d) calls within the limits: the bystander's connection serves calls (or reconnects)
    bystanderCallSucceeds();
    freshCallSucceeds();
    before.awaitReturned(WAIT, SLACK);
  }

  @Test
  void aCallFloodOnOneConnectionLeavesOtherConnectionsServed() throws Exception {
    start(InboundLimits.builder().maxConcurrentCallsPerConnection(10).build());
    MemoryBaseline before = baseline();

    RawH2Client flooder = connect();
    List<Integer> calls = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      calls.add(flooder.request(headers("park"), false));
    }
    flooder.waitFor("30 calls refused", () -> refused(flooder) == 30);
    assertThat(flooder.resets.values()).containsOnly(RawH2Client.REFUSED_STREAM);
    calls.removeAll(flooder.resets.keySet());
    for (int id : calls) {
      flooder.message(id, payload(10), true);
    }
    await("10 calls parked", () -> parked.get() == 10);

    // another connection's calls keep succeeding while the flooder's take their place
    for (int i = 0; i < 20; i++) {
      bystanderCallSucceeds();
    }
    freshCallSucceeds();
    assertThat(maxParked).as("one connection's calls in the handlers at once").hasValue(10);

    // (d) the flooder's accepted calls complete once the handler lets them
    unpark.complete(null);
    for (int id : calls) {
      awaitStatus(flooder, id);
      assertThat(flooder.grpcStatus(id)).isEqualTo(OK);
    }
    before.awaitReturned(WAIT, SLACK);
  }

  private static YarpcException failure(CompletableFuture<?> f) throws Exception {
    try {
      Object v = f.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
      if (v instanceof Response) {
        ((Response) v).body().release();
      }
      throw new AssertionError("expected a failure, got " + v);
    } catch (ExecutionException e) {
      assertThat(e.getCause()).isInstanceOf(YarpcException.class);
      YarpcException y = (YarpcException) e.getCause();
      if (y.response() != null) {
        y.response().body().release();
      }
      return y;
    }
  }
}
