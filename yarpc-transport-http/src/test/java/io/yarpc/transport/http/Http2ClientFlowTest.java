package io.yarpc.transport.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.codec.http2.Http2CodecUtil;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2Settings;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What the h2c outbound says about flow control and stream ends, seen from a bare Netty HTTP/2 server
 * ({@link RawH2Server}) that records the client's frames: it announces gRPC-sized windows in its first
 * flight (a 1 MiB stream window in SETTINGS, the connection window raised to 16 MiB before any request),
 * returns window for what it has read even while the caller holds every response body, and resets the
 * stream of a call it gives up with {@code CANCEL}. (Stream ids: a Netty client's first stream is 3.)
 */
class Http2ClientFlowTest {
  private static final int MIB = 1 << 20;

  private final HttpTransport transport = HttpTransport.builder().eventLoopThreads(1).build();
  private RawH2Server server;
  private HttpOutbound outbound;

  @AfterEach
  void stop() {
    if (outbound != null) {
      outbound.stop();
    }
    transport.stop();
    if (server != null) {
      server.close();
    }
  }

  private HttpOutbound start(int maxResponseBodySize) throws Exception {
    // the server's own windows are gRPC's too, so its flow control never holds the client back
    server = new RawH2Server(Http2Settings.defaultSettings().initialWindowSize(MIB), 16 * MIB);
    outbound =
        transport
            .singleOutboundBuilder("127.0.0.1:" + server.port())
            .http2(true)
            .maxResponseBodySize(maxResponseBodySize)
            .build();
    outbound.start();
    return outbound;
  }

  @Test
  void aServerThatSendsNoSettingsFailsTheConnectionWithinTheConnectTimeout() throws Exception {
    // a TCP server that reads and never answers: not an HTTP/2 server, or a stuck one
    HttpTransport quick =
        HttpTransport.builder().eventLoopThreads(1).connectTimeout(Duration.ofMillis(300)).build();
    try (ServerSocket silent = new ServerSocket(0, 8, InetAddress.getLoopbackAddress())) {
      // the bytes of the first connection that sends any (the peer's availability probe
      // connects and closes without a byte), read until the client closes it; on a thread of its
      // own, not the common pool's
      CompletableFuture<Integer> readUntilClosed = new CompletableFuture<>();
      Thread reader =
          new Thread(
              () -> {
                try {
                  for (; ; ) {
                    try (Socket s = silent.accept()) {
                      s.setSoTimeout(10_000); // a guard: the client closes long before
                      InputStream in = s.getInputStream();
                      int read = 0;
                      for (int n; (n = in.read(new byte[4096])) > 0; ) {
                        read += n;
                      }
                      if (read > 0) {
                        readUntilClosed.complete(read);
                        return;
                      }
                    }
                  }
                } catch (IOException e) {
                  readUntilClosed.completeExceptionally(e); // the server socket closed first
                }
              },
              "silent-server");
      reader.setDaemon(true);
      reader.start();
      HttpOutbound h2 =
          quick.singleOutboundBuilder("127.0.0.1:" + silent.getLocalPort()).http2(true).build();
      h2.start();
      try {
        YarpcException e = failure(h2.call(request("echo", new byte[10], Duration.ofSeconds(30))));
        assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
        assertThat(e.unprocessed()).isTrue();
        assertThat(e.getMessage())
            .isEqualTo(
                "peer 127.0.0.1:%d sent no HTTP/2 SETTINGS within 300 ms of the connection opening;"
                    + " is it an HTTP/2 server?",
                silent.getLocalPort());
        // the client closed the connection: the server read its preface (24 bytes) and more,
        // then the end of the stream
        assertThat(readUntilClosed.get(10, TimeUnit.SECONDS)).isGreaterThan(24);
      } finally {
        h2.stop();
      }
    } finally {
      quick.stop();
    }
  }

  private static Request request(String procedure, byte[] body, Duration timeout) {
    return Request.of(
        RequestMeta.builder()
            .caller("caller")
            .service("svc")
            .procedure(procedure)
            .encoding("raw")
            .deadline(Deadline.after(timeout))
            .build(),
        Body.of(body));
  }

  @Test
  void announcesGrpcSizedWindowsBeforeItsFirstRequest() throws Exception {
    start(64 * MIB);
    outbound
        .call(request("echo", new byte[10], Duration.ofSeconds(10)))
        .get(10, TimeUnit.SECONDS)
        .body()
        .release();

    assertThat(server.clientSettings()).hasSize(1);
    assertThat(server.clientSettings().get(0).initialWindowSize()).isEqualTo(MIB);
    int firstHeaders = indexOfFirst(RawH2Server.Headers.class);
    long raisedBefore =
        server.events.subList(0, firstHeaders).stream()
            .filter(e -> e instanceof RawH2Server.WindowUpdate w && w.stream() == 0)
            .mapToLong(e -> ((RawH2Server.WindowUpdate) e).increment())
            .sum();
    assertThat(Http2CodecUtil.DEFAULT_WINDOW_SIZE + raisedBefore)
        .as("the connection window when the first request leaves")
        .isEqualTo(16 * MIB);
  }

  @Test
  void returnsWindowForWhatItReadWhileTheCallerHoldsTheBodies() throws Exception {
    start(64 * MIB);
    int calls = 40; // 40 MiB of responses: more than twice the connection window
    List<Response> held = new ArrayList<>();
    try {
      for (int i = 0; i < calls; i++) {
        held.add(
            outbound
                .call(request("echo", new byte[MIB], Duration.ofSeconds(30)))
                .get(30, TimeUnit.SECONDS));
      }
      for (Response r : held) {
        assertThat(r.body().toByteArray()).hasSize(MIB);
      }
    } finally {
      held.forEach(r -> r.body().release());
    }
    // a client that returned window only when the caller released a body would have stalled after
    // 16
    // MiB: the server could send all 40 MiB only because the window came back as the bytes were
    // read
    long connectionWindow =
        Http2CodecUtil.DEFAULT_WINDOW_SIZE
            + server.connectionWindowUpdates().stream().mapToLong(i -> i).sum();
    assertThat(connectionWindow).isGreaterThanOrEqualTo((long) calls * MIB);
  }

  @Test
  void responsesGoIntoArraysOfTheirOwnOnlyWithinTheConnectionsCap() throws Exception {
    start(64 * MIB);
    int big = 4 * MIB; // ReceivedContent.WHOLE_MAX: four of them fill the connection's 16 MiB cap
    List<CompletableFuture<Response>> calls = new ArrayList<>();
    List<Response> responses = new ArrayList<>();
    try {
      // each answer's headers and first half arrive before the next call leaves, and the second
      // halves only with the last answer: so five responses are being received at once
      for (int i = 0; i < 5; i++) {
        int size = i < 4 ? big : 100_000;
        calls.add(outbound.call(request(RawH2Server.HALF, new byte[size], Duration.ofSeconds(30))));
        awaitHalves(i + 1);
      }
      calls.add(outbound.call(request("echo", new byte[100_000], Duration.ofSeconds(30))));
      for (CompletableFuture<Response> f : calls) {
        responses.add(f.get(30, TimeUnit.SECONDS));
      }
      // (the last answer's headers may overtake the flow-controlled second halves: either way)
      List<Boolean> immutable =
          responses.subList(0, 5).stream().map(r -> r.body().isImmutable()).toList();
      assertThat(immutable)
          .as("four of 4 MiB fill the cap: the fifth, received at the same time, gets pieces")
          .containsExactly(true, true, true, true, false);
      for (int i = 0; i < responses.size(); i++) {
        assertThat(responses.get(i).body().length()).isEqualTo(i < 4 ? big : 100_000);
      }
      responses.add(
          outbound
              .call(request("echo", new byte[100_000], Duration.ofSeconds(30)))
              .get(30, TimeUnit.SECONDS));
      assertThat(responses.get(responses.size() - 1).body().isImmutable())
          .as("the arrays of the responses received count no more")
          .isTrue();
    } finally {
      responses.forEach(r -> r.body().release());
    }
  }

  private void awaitHalves(int n) throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10); // a guard, not a timing assertion
    while (server.halvesSent.get() < n && System.nanoTime() < end) {
      Thread.sleep(5);
    }
    assertThat(server.halvesSent.get()).isEqualTo(n);
  }

  @Test
  void aCancelledCallResetsItsStream() throws Exception {
    start(64 * MIB);
    CompletableFuture<Response> f =
        outbound.call(request(RawH2Server.HOLD, new byte[100], Duration.ofSeconds(10)));
    awaitEvent(new RawH2Server.Data(3, 100, true)); // the whole request arrived; no answer comes
    f.cancel(false); // as the caller's deadline does
    awaitEvent(new RawH2Server.Reset(3, Http2Error.CANCEL.code()));
  }

  @Test
  void aResponseOverTheLimitFailsTheCallAndTheConnectionCarriesOn() throws Exception {
    start(1000);
    YarpcException e =
        failure(outbound.call(request("echo", new byte[5000], Duration.ofSeconds(10))));
    assertThat(e.code()).isEqualTo(Code.RESOURCE_EXHAUSTED);
    assertThat(e.getMessage())
        .isEqualTo(
            "response body from peer 127.0.0.1:"
                + server.port()
                + " is larger than the limit of 1000 bytes");
    // the stream is reset (the server, having sent it all, has closed it already and does not see
    // it), and the connection carries on
    Response ok =
        outbound
            .call(request("echo", new byte[10], Duration.ofSeconds(10)))
            .get(10, TimeUnit.SECONDS);
    assertThat(ok.body().toByteArray()).hasSize(10);
    ok.body().release();
  }

  private int indexOfFirst(Class<?> type) {
    for (int i = 0; i < server.events.size(); i++) {
      if (type.isInstance(server.events.get(i))) {
        return i;
      }
    }
    throw new AssertionError("no " + type.getSimpleName() + " in " + server.events);
  }

  /** Waits (at most 10 s: a guard, not a timing assertion) until the server recorded {@code event}. */
  private void awaitEvent(RawH2Server.Event event) throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!server.events.contains(event) && System.nanoTime() < end) {
      Thread.sleep(10);
    }
    assertThat(server.events).contains(event);
  }

  private static YarpcException failure(CompletableFuture<Response> f) throws Exception {
    try {
      Response r = f.get(10, TimeUnit.SECONDS);
      r.body().release();
      throw new AssertionError("expected a failure");
    } catch (ExecutionException e) {
      assertThat(e.getCause()).isInstanceOf(YarpcException.class);
      return (YarpcException) e.getCause();
    }
  }
}
