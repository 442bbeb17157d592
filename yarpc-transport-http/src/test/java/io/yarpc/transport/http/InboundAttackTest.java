package io.yarpc.transport.http;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http2.Http2Headers;
import io.yarpc.Call;
import io.yarpc.Dispatcher;
import io.yarpc.testing.MemoryBaseline;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.InboundLimits;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The HTTP inbound under abuse, one attack per test on real loopback sockets (hand-written HTTP/1.1 and
 * HTTP/2 frames where real clients would not misbehave), with limits set small so each runs in a second
 * or two. Each asserts four things: (a) the limit fired with the protocol's answer (status, RST_STREAM or
 * GOAWAY code); (b) a normal call on a fresh connection succeeds afterwards; (c) the server's memory is back
 * to its baseline ({@link MemoryBaseline}: retained heap and pooled buffers in use; the paranoid leak
 * detector checks every buffer was released) and it holds no request bytes; (d) calls within the limits,
 * made meanwhile on other connections (a {@link Bystander}) or on the attacking connection itself, all
 * completed.
 */
class InboundAttackTest {
  /** How far from its baseline the server's memory may end (other tests' and the JVM's noise). */
  private static final long SLACK = 8L << 20;

  private static final Duration RETURN_TIMEOUT = Duration.ofSeconds(15);

  private HttpTransport transport;
  private HttpTransport clients;
  private HttpInbound inbound;
  private Dispatcher dispatcher;
  private final ConcurrentLinkedQueue<CompletableFuture<Response>> blocked =
      new ConcurrentLinkedQueue<>();
  private final AtomicInteger blockStarted = new AtomicInteger();
  private final ExecutorService threads = Executors.newCachedThreadPool();

  private static InboundLimits.Builder limits() {
    return InboundLimits.builder();
  }

  private void start(InboundLimits limits) throws Exception {
    // received bytes go to pooled direct buffers: a pool's heap chunks (4 MiB each, kept for reuse
    // once allocated) would otherwise show as retained heap
    transport = HttpTransport.builder().eventLoopThreads(2).receiveIntoHeap(false).build();
    clients = HttpTransport.builder().eventLoopThreads(1).receiveIntoHeap(false).build();
    inbound = transport.inboundBuilder().limits(limits).build();
    dispatcher = Dispatcher.builder(YarpcTestService.NAME).inbound(inbound).build();
    dispatcher.register(
        Procedure.builder("echo")
            .unary(
                r -> {
                  byte[] b = r.body().toByteArray();
                  r.body().release();
                  return CompletableFuture.completedFuture(Response.of(Body.of(b)));
                })
            .build(),
        Procedure.builder("big")
            .unary(
                r -> {
                  int size = Integer.parseInt(new String(r.body().toByteArray(), UTF_8));
                  r.body().release();
                  return CompletableFuture.completedFuture(Response.of(Body.of(new byte[size])));
                })
            .build(),
        Procedure.builder("block")
            .unary(
                r -> {
                  r.body().release();
                  CompletableFuture<Response> f = new CompletableFuture<>();
                  Call call = Call.current();
                  call.onCancel(() -> f.completeExceptionally(call.cancellation()));
                  blocked.add(f);
                  blockStarted.incrementAndGet();
                  return f;
                })
            .build());
    dispatcher.start();
    clients.start();
    // warm up classes and pools (each event loop's arenas allocate their first chunks lazily, and a
    // pooled heap chunk counts as retained heap) before the baselines are taken
    for (int i = 0; i < 4; i++) {
      assertServes();
    }
    try (Bystander b1 = new Bystander(false);
        Bystander b2 = new Bystander(true)) {
      Thread.sleep(50);
    }
  }

  @AfterEach
  void stop() {
    releaseBlocked();
    if (dispatcher != null) {
      dispatcher.stop();
    }
    if (clients != null) {
      clients.stop();
    }
    threads.shutdownNow();
  }

  private int port() {
    return inbound.address().getPort();
  }

  private void releaseBlocked() {
    for (CompletableFuture<Response> f; (f = blocked.poll()) != null; ) {
      f.complete(Response.of(Body.of("done".getBytes(UTF_8))));
    }
  }

  /** (b) A normal call succeeds on a fresh HTTP/1.1 connection and on a fresh h2c connection. */
  private void assertServes() throws Exception {
    try (RawClient c = new RawClient(port())) {
      c.send(RawClient.request("echo", 2)).send("hi");
      RawClient.Res res = c.read();
      assertThat(res.status()).isEqualTo(200);
      assertThat(res.body()).isEqualTo("hi");
    }
    try (H2cClient c = new H2cClient(port())) {
      H2cClient.Res res =
          c.request(
              HttpMethod.POST,
              "/",
              Map.of(
                  "rpc-caller", "c",
                  "rpc-service", YarpcTestService.NAME,
                  "rpc-procedure", "echo",
                  "rpc-encoding", "raw",
                  "context-ttl-ms", "10000"),
              "h2".getBytes(UTF_8));
      assertThat(res.status()).isEqualTo(200);
      assertThat(res.body()).isEqualTo("h2");
    }
  }

  /** (c) No request in flight, no request bytes held, memory back to {@code before}. */
  private void assertReturned(MemoryBaseline before) throws InterruptedException {
    for (int i = 0; i < 1000 && (inbound.activeRequests() > 0 || inbound.pendingBytes() > 0); i++) {
      Thread.sleep(10);
    }
    assertThat(inbound.activeRequests()).as("requests in flight").isZero();
    assertThat(inbound.pendingBytes()).as("request bytes held").isZero();
    try {
      before.awaitReturned(RETURN_TIMEOUT, SLACK);
    } catch (AssertionError e) {
      throw new AssertionError(e.getMessage() + "; live heap now:\n" + histogram(), e);
    }
  }

  /** The top of a class histogram of the live heap, to show what was kept. */
  private static String histogram() {
    try {
      javax.management.ObjectName n =
          new javax.management.ObjectName("com.sun.management:type=DiagnosticCommand");
      String h =
          (String)
              java.lang.management.ManagementFactory.getPlatformMBeanServer()
                  .invoke(
                      n,
                      "gcClassHistogram",
                      new Object[] {new String[0]},
                      new String[] {String[].class.getName()});
      return String.join("\n", java.util.Arrays.asList(h.split("\n")).subList(0, 25));
    } catch (Exception e) {
      return e.toString();
    }
  }

  /** (d) Calls made on connections of their own while an attack runs; every one must succeed. */
  private final class Bystander implements AutoCloseable {
    private final HttpOutbound out;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final AtomicInteger ok = new AtomicInteger();
    private final List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final Future<?> loop;

    Bystander(boolean http2) {
      out = clients.singleOutboundBuilder(inbound.hostPort()).http2(http2).build();
      out.start();
      loop =
          threads.submit(
              () -> {
                while (running.get() || ok.get() == 0) {
                  RequestMeta meta =
                      RequestMeta.builder()
                          .caller("bystander")
                          .service(YarpcTestService.NAME)
                          .procedure("echo")
                          .encoding("raw")
                          .deadline(Deadline.after(Duration.ofSeconds(10)))
                          .build();
                  try {
                    Response r =
                        out.call(Request.of(meta, Body.of("ok".getBytes(UTF_8))))
                            .get(15, TimeUnit.SECONDS);
                    String body = new String(r.body().toByteArray(), UTF_8);
                    r.body().release();
                    if (body.equals("ok")) {
                      ok.incrementAndGet();
                    } else {
                      failures.add(new AssertionError("echoed " + body));
                    }
                  } catch (Exception e) {
                    failures.add(e);
                    return;
                  }
                }
              });
    }

    /** Stops after the call in progress; asserts every call succeeded (and at least one was made). */
    @Override
    public void close() throws Exception {
      running.set(false);
      loop.get(30, TimeUnit.SECONDS);
      out.stop();
      assertThat(failures).as("bystander calls").isEmpty();
      assertThat(ok.get()).isPositive();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // HTTP/2 resets

  @Test
  void h2cRapidResetEndsWithEnhanceYourCalm() throws Exception {
    start(limits().maxRstFramesPerWindow(20, Duration.ofSeconds(30)).build());
    MemoryBaseline before = MemoryBaseline.take();
    int sent = 0;
    try (Bystander b = new Bystander(true);
        RawH2Client c = new RawH2Client(port())) {
      Http2Headers call = RawH2Client.call("block", 4);
      try {
        for (int i = 0; i < 200; i++) {
          int stream = 1 + 2 * i;
          c.headers(stream, call, false).data(stream, "abcd".getBytes(UTF_8), true);
          c.rst(stream, RawH2Client.CANCEL);
          sent++;
        }
      } catch (IOException closedByServer) {
        // the server hung up mid-flood
      }
      RawH2Client.Frame goAway = c.await(f -> f.type() == RawH2Client.GOAWAY);
      assertThat(goAway).as("GOAWAY after %d resets", sent).isNotNull();
      assertThat(goAway.errorCode()).isEqualTo(RawH2Client.ENHANCE_YOUR_CALM);
      assertThat(c.closedByServer()).isTrue();
    }
    assertServes();
    assertReturned(before);
  }

  @Test
  void h2cServerProvokedResetsEndWithEnhanceYourCalm() throws Exception {
    // CVE-2025-55163 "MadeYouReset": frames that make the server reset the stream itself (here a
    // WINDOW_UPDATE of 0 on an open stream, a stream error) while its handler may already run
    start(limits().maxRstFramesPerWindow(20, Duration.ofSeconds(30)).build());
    MemoryBaseline before = MemoryBaseline.take();
    int resets = 0;
    try (Bystander b = new Bystander(true);
        RawH2Client c = new RawH2Client(port())) {
      Http2Headers call = RawH2Client.call("block", 4);
      try {
        for (int i = 0; i < 200; i++) {
          int stream = 1 + 2 * i;
          c.headers(stream, call, false).data(stream, "abcd".getBytes(UTF_8), true);
          c.windowUpdate(stream, 0);
        }
      } catch (IOException closedByServer) {
        // the server hung up mid-flood
      }
      RawH2Client.Frame goAway = null;
      for (RawH2Client.Frame f; (f = c.read()) != null; ) {
        if (f.type() == RawH2Client.RST_STREAM) {
          assertThat(f.errorCode()).isEqualTo(RawH2Client.PROTOCOL_ERROR);
          resets++;
        } else if (f.type() == RawH2Client.GOAWAY) {
          goAway = f;
        }
      }
      assertThat(goAway).as("GOAWAY after %d provoked resets", resets).isNotNull();
      assertThat(goAway.errorCode()).isEqualTo(RawH2Client.ENHANCE_YOUR_CALM);
      assertThat(resets).isBetween(1, 21);
    }
    assertServes();
    assertReturned(before);
  }

  @Test
  void continuationFloodIsCutOff() throws Exception {
    start(limits().maxHeaderBytes(8 << 10).build());
    MemoryBaseline before = MemoryBaseline.take();
    try (Bystander b = new Bystander(true)) {
      // large CONTINUATION frames: the header block outgrows the header list size
      try (RawH2Client c = new RawH2Client(port())) {
        byte[] first = c.encode(RawH2Client.call("echo", 0));
        int frames = 0;
        try {
          c.headers(1, first, false, false);
          byte[] junk = new byte[16 << 10];
          for (; frames < 256; frames++) { // 4 MiB if nothing stopped it
            c.continuation(1, junk, false);
          }
        } catch (IOException closedByServer) {
          // the server hung up mid-flood
        }
        RawH2Client.Frame goAway = c.await(f -> f.type() == RawH2Client.GOAWAY);
        assertThat(goAway).as("GOAWAY after %d CONTINUATION frames", frames).isNotNull();
        assertThat(goAway.errorCode()).isNotEqualTo(RawH2Client.NO_ERROR);
        assertThat(c.closedByServer()).isTrue();
      }
      // empty CONTINUATION frames: cheap to send, each one work for the server
      try (RawH2Client c = new RawH2Client(port())) {
        byte[] first = c.encode(RawH2Client.call("echo", 0));
        try {
          c.headers(1, first, false, false);
          for (int i = 0; i < 100_000; i++) {
            c.continuation(1, new byte[0], false);
          }
        } catch (IOException closedByServer) {
          // the server hung up mid-flood
        }
        RawH2Client.Frame goAway = c.await(f -> f.type() == RawH2Client.GOAWAY);
        assertThat(goAway).isNotNull();
        assertThat(goAway.errorCode()).isNotEqualTo(RawH2Client.NO_ERROR);
        assertThat(c.closedByServer()).isTrue();
      }
    }
    assertServes();
    assertReturned(before);
  }

  // ---------------------------------------------------------------------------------------------
  // Headers and request lines

  @Test
  void headerCountFloodOverHttp1() throws Exception {
    start(limits().maxHeaderCount(64).build());
    MemoryBaseline before = MemoryBaseline.take();
    try (Bystander b = new Bystander(false)) {
      StringBuilder flood = new StringBuilder(RawClient.request("echo", 0));
      flood.setLength(flood.length() - 2); // reopen the header block
      for (int i = 0; i < 20_000; i++) {
        flood.append("X-Flood: ").append(i).append("\r\n");
      }
      byte[] bytes = flood.append("\r\n").toString().getBytes(UTF_8);
      List<Future<RawClient.Res>> answers = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        answers.add(
            threads.submit(
                () -> {
                  try (RawClient c = new RawClient(port())) {
                    Future<?> sending = threads.submit(() -> sendIgnoringClose(c, bytes));
                    RawClient.Res res = c.read();
                    assertThat(c.closedByServer()).isTrue();
                    sending.get(10, TimeUnit.SECONDS);
                    return res;
                  }
                }));
      }
      for (Future<RawClient.Res> f : answers) {
        RawClient.Res res = f.get(20, TimeUnit.SECONDS);
        assertThat(res.status()).isEqualTo(431);
        assertThat(res.headers())
            .containsEntry("rpc-error-code", "invalid-argument")
            .containsEntry("connection", "close");
        assertThat(res.body()).isEqualTo("request has more than 64 header fields\n");
      }
    }
    assertServes();
    assertReturned(before);
  }

  @Test
  void headerCountFloodOverH2c() throws Exception {
    start(limits().maxHeaderCount(64).maxHeaderBytes(16 << 10).build());
    MemoryBaseline before = MemoryBaseline.take();
    try (Bystander b = new Bystander(true);
        RawH2Client c = new RawH2Client(port())) {
      // each block: the call's headers, one field added to the HPACK table, then that field again
      // and again by its index, one byte each (the attack in the issue sent 31,000 per block on 200
      // streams). Within the header list size (300 fields here) the inbound counts them: 431 with
      // YARPC headers; beyond it Netty's decoder stops adding fields at the list size: its own 431
      int ours = 10;
      int streams = ours + 5;
      for (int i = 0; i < streams; i++) {
        c.headerBlock(1 + 2 * i, floodBlock(i < ours ? 300 : 2_000), true);
      }
      for (int answered = 0; answered < streams; answered++) {
        RawH2Client.Frame f = c.await(x -> x.type() == RawH2Client.HEADERS);
        assertThat(f).as("answer %d", answered).isNotNull();
        assertThat(f.status()).isEqualTo(431);
        if (f.stream() < 1 + 2 * ours) {
          assertThat(f.headers().get("rpc-error-code").toString()).isEqualTo("invalid-argument");
          assertThat(f.headers().get("rpc-service")).isNotNull();
        }
      }
      assertReturned(before); // the connection is open still: nothing of the floods is kept for it
    }
    assertServes();
    assertReturned(before);
  }

  /** A HEADERS block for an echo call plus {@code n} copies of one HPACK-indexed field, by hand. */
  private static byte[] floodBlock(int n) {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    b.write(0x83); // :method POST (static table)
    b.write(0x86); // :scheme http
    b.write(0x84); // :path /
    literal(b, ":authority", "test");
    literal(b, "rpc-caller", "raw-h2");
    literal(b, "rpc-service", YarpcTestService.NAME);
    literal(b, "rpc-procedure", "echo");
    literal(b, "rpc-encoding", "raw");
    literal(b, "context-ttl-ms", "10000");
    b.write(0x40); // literal with incremental indexing, new name: becomes dynamic entry 62
    string(b, "x-flood");
    string(b, "1");
    for (int i = 0; i < n; i++) {
      b.write(0x80 | 62); // indexed field: the entry above, one byte
    }
    return b.toByteArray();
  }

  private static void literal(ByteArrayOutputStream b, String name, String value) {
    b.write(0x00); // literal without indexing, new name
    string(b, name);
    string(b, value);
  }

  private static void string(ByteArrayOutputStream b, String s) {
    byte[] bytes = s.getBytes(UTF_8);
    assertThat(bytes.length).isLessThan(127);
    b.write(bytes.length);
    b.writeBytes(bytes);
  }

  @Test
  void oversizedRequestLines() throws Exception {
    start(limits().maxRequestLineLength(1024).build());
    MemoryBaseline before = MemoryBaseline.take();
    try (Bystander b = new Bystander(false)) {
      byte[] line =
          ("POST /" + "p".repeat(64 << 10) + " HTTP/1.1\r\nHost: x\r\n\r\n").getBytes(UTF_8);
      for (int i = 0; i < 8; i++) {
        try (RawClient c = new RawClient(port())) {
          Future<?> sending = threads.submit(() -> sendIgnoringClose(c, line));
          RawClient.Res res = c.read();
          assertThat(res.status()).isEqualTo(414);
          assertThat(res.headers()).containsEntry("rpc-error-code", "invalid-argument");
          assertThat(res.body()).isEqualTo("request line is longer than the limit of 1024 bytes\n");
          assertThat(c.closedByServer()).isTrue();
          sending.get(10, TimeUnit.SECONDS);
        }
      }
    }
    assertServes();
    assertReturned(before);
  }

  // ---------------------------------------------------------------------------------------------
  // Memory held for requests: backpressure and the read timeout

  @Test
  void stalledBodiesOnManyConnectionsAreBoundedThenTimedOut() throws Exception {
    long budget = 4L << 20;
    int connections = 16;
    int sent = 1 << 20; // of a declared 8 MiB: each client stalls after 1 MiB
    start(
        limits()
            .maxRequestSize(8 << 20)
            .maxPendingBytes(budget)
            .maxPendingBytesPerConnection(1 << 20)
            .readTimeout(Duration.ofMillis(500))
            .build());
    MemoryBaseline before = MemoryBaseline.take();
    AtomicLong most = new AtomicLong();
    AtomicBoolean watching = new AtomicBoolean(true);
    Future<?> watch =
        threads.submit(
            () -> {
              while (watching.get()) {
                most.accumulateAndGet(inbound.pendingBytes(), Math::max);
                Thread.onSpinWait();
              }
            });
    try (Bystander b1 = new Bystander(false);
        Bystander b2 = new Bystander(true)) {
      List<RawClient> clients = new ArrayList<>();
      try {
        byte[] part = new byte[sent];
        for (int i = 0; i < connections; i++) {
          RawClient c = new RawClient(port());
          clients.add(c);
          threads.submit(
              () -> sendIgnoringClose(c, RawClient.request("echo", 8 << 20).getBytes(UTF_8), part));
        }
        for (RawClient c : clients) {
          RawClient.Res res = c.read();
          assertThat(res.status()).isEqualTo(408);
          assertThat(res.headers()).containsEntry("rpc-error-code", "deadline-exceeded");
          assertThat(c.closedByServer()).isTrue();
        }
      } finally {
        for (RawClient c : clients) {
          c.close();
        }
      }
    }
    watching.set(false);
    watch.get(10, TimeUnit.SECONDS);
    // the inbound's budget, plus one request past it (the exempt connection's), plus what one read
    // brings in on each connection before it is paused
    assertThat(most.get())
        .as("request bytes held at most")
        .isLessThanOrEqualTo(budget + sent + connections * (256L << 10));
    assertServes();
    assertReturned(before);
  }

  @Test
  void stalledStreamsOnOneH2cConnectionGetNoCreditPastTheBudget() throws Exception {
    long perConnection = 256 << 10;
    int streams = 8;
    int perStream = 512 << 10; // of a declared 1 MiB: each stream stalls after 512 KiB
    start(
        limits()
            .maxPendingBytesPerConnection(perConnection)
            .readTimeout(Duration.ofMillis(300))
            .build());
    MemoryBaseline before = MemoryBaseline.take();
    AtomicLong most = new AtomicLong();
    AtomicBoolean watching = new AtomicBoolean(true);
    Future<?> watch =
        threads.submit(
            () -> {
              while (watching.get()) {
                most.accumulateAndGet(inbound.pendingBytes(), Math::max);
                Thread.onSpinWait();
              }
            });
    long sent;
    try (Bystander b = new Bystander(true);
        RawH2Client c = new RawH2Client(port())) {
      c.awaitConnectionWindow(perConnection);
      for (int i = 0; i < streams; i++) {
        c.headers(1 + 2 * i, RawH2Client.call("echo", 1 << 20), false);
      }
      sent = c.sendWhileWindowsAllow(streams, perStream, 100);
      int timedOut = 0;
      for (RawH2Client.Frame f; timedOut < streams && (f = c.read()) != null; ) {
        if (f.type() == RawH2Client.HEADERS) {
          assertThat(f.status()).isEqualTo(408);
          assertThat(f.headers().get("rpc-error-code").toString()).isEqualTo("deadline-exceeded");
          timedOut++;
        }
      }
      assertThat(timedOut).isEqualTo(streams);
    }
    watching.set(false);
    watch.get(10, TimeUnit.SECONDS);
    assertThat(sent)
        .as("credit ran out before the client sent all it wanted")
        .isLessThan((long) streams * perStream);
    // the budget, plus the windows the streams had been given when credit stopped (64 KiB each
    // here), plus the oldest stream's request, which may go on to its end
    assertThat(most.get())
        .as("request bytes held at most")
        .isLessThanOrEqualTo(perConnection + streams * 65_535L + perStream);
    assertServes();
    assertReturned(before);
  }

  // ---------------------------------------------------------------------------------------------
  // Peers that do not read

  @Test
  void zeroWindowReaderHasItsStreamsReset() throws Exception {
    start(
        limits().writeTimeout(Duration.ofMillis(500)).maxConcurrentCallsPerConnection(100).build());
    MemoryBaseline before = MemoryBaseline.take();
    int streams = 40;
    byte[] body = new byte[256 << 10];
    try (Bystander b = new Bystander(true);
        RawH2Client c = new RawH2Client(port(), RawH2Client.SETTINGS_INITIAL_WINDOW_SIZE, 0)) {
      c.awaitConnectionWindow(streams * body.length);
      for (int i = 0; i < streams; i++) {
        int stream = 1 + 2 * i;
        c.headers(stream, RawH2Client.call("echo", body.length), false);
        c.sendData(stream, body, true);
      }
      int answered = 0;
      int reset = 0;
      for (RawH2Client.Frame f; reset < streams && (f = c.read()) != null; ) {
        if (f.type() == RawH2Client.HEADERS) {
          assertThat(f.status()).isEqualTo(200);
          answered++;
        } else if (f.type() == RawH2Client.DATA) {
          assertThat(f.payload()).as("nothing fits a zero window").isEmpty();
        } else if (f.type() == RawH2Client.RST_STREAM) {
          assertThat(f.errorCode()).isEqualTo(RawH2Client.CANCEL);
          reset++;
        }
      }
      assertThat(answered).isEqualTo(streams);
      assertThat(reset).isEqualTo(streams);
      assertReturned(before); // the connection is open still: the answers it did not read are gone
    }
    assertServes();
    assertReturned(before);
  }

  @Test
  void http1ClientThatNeverReadsIsDisconnected() throws Exception {
    start(limits().writeTimeout(Duration.ofMillis(500)).build());
    MemoryBaseline before = MemoryBaseline.take();
    try (Bystander b = new Bystander(false);
        RawClient c = new RawClient(port(), 8 << 10)) {
      String size = Integer.toString(16 << 20);
      c.send(RawClient.request("big", size.length())).send(size);
      c.send(RawClient.request("echo", 2) + "hi"); // pipelined behind it, never answered
      for (int i = 0; i < 1000 && inbound.activeRequests() == 0; i++) {
        Thread.sleep(10); // the request arrives
      }
      for (int i = 0; i < 1000 && inbound.activeRequests() > 0; i++) {
        Thread.sleep(10); // the 16 MiB answer is abandoned once the write timeout passes
      }
      assertThat(inbound.activeRequests()).isZero();
      assertThat(c.closedByServer()).isTrue();
    }
    assertServes();
    assertReturned(before);
  }

  // ---------------------------------------------------------------------------------------------
  // Connections and calls

  @Test
  void connectionsBeyondTheLimitAreClosedAtOnce() throws Exception {
    start(limits().maxConnections(4).build());
    MemoryBaseline before = MemoryBaseline.take();
    List<RawClient> admitted = new ArrayList<>();
    try {
      for (int i = 0; i < 4; i++) {
        RawClient c = new RawClient(port());
        admitted.add(c);
        c.send(RawClient.request("echo", 1)).send("a"); // (d) within the limit: served
        assertThat(c.read().body()).isEqualTo("a");
      }
      for (int i = 0; i < 6; i++) {
        try (RawClient c = new RawClient(port())) {
          sendIgnoringClose(c, (RawClient.request("echo", 1) + "b").getBytes(UTF_8));
          assertThat(c.closedByServer()).as("refused connection %d", i).isTrue();
        }
      }
      assertThat(inbound.refusedConnections()).isEqualTo(6);
      for (RawClient c : admitted) {
        c.send(RawClient.request("echo", 1)).send("c");
        assertThat(c.read().body()).as("admitted connections keep serving").isEqualTo("c");
      }
    } finally {
      for (RawClient c : admitted) {
        c.close();
      }
    }
    for (int i = 0; ; i++) { // the closed connections leave the count as the server sees them close
      try {
        assertServes();
        break;
      } catch (AssertionError | IOException e) {
        if (i == 100) {
          throw e;
        }
        Thread.sleep(20);
      }
    }
    assertReturned(before);
  }

  @Test
  void oneConnectionsCallFloodDoesNotStarveAnother() throws Exception {
    int perConnection = 100;
    start(limits().maxConcurrentCallsPerConnection(perConnection).build());
    MemoryBaseline before = MemoryBaseline.take();
    try (RawH2Client flood = new RawH2Client(port())) {
      flood.await(f -> f.type() == RawH2Client.SETTINGS || f.type() == RawH2Client.WINDOW_UPDATE);
      for (int i = 0; i < perConnection; i++) {
        int stream = 1 + 2 * i;
        flood.headers(stream, RawH2Client.call("block", 1), false);
        flood.data(stream, new byte[] {1}, true);
      }
      for (int i = 0; i < 1000 && blockStarted.get() < perConnection; i++) {
        Thread.sleep(10);
      }
      assertThat(blockStarted.get()).isEqualTo(perConnection);
      // (a) a stream over the connection's limit is refused; the connection stays
      int over = 1 + 2 * perConnection;
      flood.headers(over, RawH2Client.call("block", -1), true);
      RawH2Client.Frame refused = flood.await(f -> f.type() == RawH2Client.RST_STREAM);
      assertThat(refused.stream()).isEqualTo(over);
      assertThat(refused.errorCode()).isEqualTo(RawH2Client.REFUSED_STREAM);
      // another connection's calls all succeed meanwhile, over HTTP/1.1 and h2c
      try (Bystander b1 = new Bystander(false);
          Bystander b2 = new Bystander(true)) {
        Thread.sleep(200);
      }
      releaseBlocked();
      int done = 0;
      for (RawH2Client.Frame f; done < perConnection && (f = flood.read()) != null; ) {
        if (f.type() == RawH2Client.HEADERS && f.status() != 0) {
          assertThat(f.status()).isEqualTo(200);
          done++;
        }
      }
      assertThat(done).as("(d) the flood's own calls, within its limit, completed").isEqualTo(100);
    }
    assertServes();
    assertReturned(before);
  }

  private static void sendIgnoringClose(RawClient c, byte[]... parts) {
    try {
      for (byte[] p : parts) {
        c.send(p);
      }
    } catch (SocketTimeoutException e) {
      throw new AssertionError(e);
    } catch (IOException closedByServer) {
      // the server answered and hung up before taking everything
    }
  }
}
