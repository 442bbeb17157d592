package io.yarpc.transport.http;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.Call;
import io.yarpc.Dispatcher;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.InboundLimits;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Response;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The connection timers of {@link InboundLimits} at the HTTP inbound: the handshake timeout (HTTP/1.1 first
 * request head, h2c preface and SETTINGS), the idle timeout of an h2c connection counted from its last call
 * (PINGs do not keep it), and the maximum connection age with and without a grace period.
 */
class ConnectionLimitsTest {
  private Dispatcher dispatcher;
  private HttpInbound inbound;
  private final CompletableFuture<Response> blocked = new CompletableFuture<>();
  private final CompletableFuture<YarpcException> blockedCancelled = new CompletableFuture<>();
  private final ExecutorService threads = Executors.newCachedThreadPool();

  private void start(InboundLimits limits) {
    HttpTransport transport = HttpTransport.builder().eventLoopThreads(2).build();
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
        Procedure.builder("block")
            .unary(
                r -> {
                  r.body().release();
                  Call call = Call.current();
                  call.onCancel(() -> blockedCancelled.complete(call.cancellation()));
                  return blocked;
                })
            .build());
    dispatcher.start();
  }

  @AfterEach
  void stop() {
    blocked.complete(Response.of(Body.of("late".getBytes(UTF_8))));
    if (dispatcher != null) {
      dispatcher.stop();
    }
    threads.shutdownNow();
  }

  private int port() {
    return inbound.address().getPort();
  }

  @Test
  void anHttp1ConnectionWithoutARequestHeadIsClosedAfterTheHandshakeTimeout() throws Exception {
    start(InboundLimits.builder().handshakeTimeout(Duration.ofMillis(200)).build());
    try (RawClient c = new RawClient(port())) {
      c.send("POST / HT"); // not even a request line
      assertThat(c.closedByServer()).isTrue();
    }
    // a connection that sent its first request is past its handshake
    try (RawClient c = new RawClient(port())) {
      c.send(RawClient.request("echo", 1)).send("a");
      assertThat(c.read().body()).isEqualTo("a");
      Thread.sleep(400);
      c.send(RawClient.request("echo", 1)).send("b");
      assertThat(c.read().body()).isEqualTo("b");
    }
  }

  @Test
  void anH2cConnectionWithoutSettingsIsClosedAfterTheHandshakeTimeout() throws Exception {
    start(InboundLimits.builder().handshakeTimeout(Duration.ofMillis(200)).build());
    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port())) {
      s.setSoTimeout(10_000);
      s.getOutputStream().write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(UTF_8)); // no SETTINGS
      assertThat(readToEnd(s.getInputStream())).isTrue();
    }
    try (RawH2Client c = new RawH2Client(port())) {
      c.headers(1, RawH2Client.call("echo", 1), false).data(1, new byte[] {7}, true);
      Thread.sleep(400);
      assertThat(c.await(f -> f.type() == RawH2Client.HEADERS).status()).isEqualTo(200);
      c.headers(3, RawH2Client.call("echo", 1), false).data(3, new byte[] {8}, true);
      assertThat(c.await(f -> f.type() == RawH2Client.HEADERS).status())
          .as("past its handshake: still open")
          .isEqualTo(200);
    }
  }

  @Test
  void anH2cConnectionIsIdleFromItsLastCallWhateverItsPings() throws Exception {
    start(InboundLimits.builder().idleTimeout(Duration.ofMillis(300)).build());
    try (RawH2Client c = new RawH2Client(port())) {
      c.headers(1, RawH2Client.call("echo", 1), false).data(1, new byte[] {7}, true);
      assertThat(c.await(f -> f.type() == RawH2Client.HEADERS).status()).isEqualTo(200);
      AtomicBoolean pinging = new AtomicBoolean(true);
      Future<?> pings =
          threads.submit(
              () -> {
                while (pinging.get()) {
                  c.frame(RawH2Client.PING, 0, 0, new byte[8]);
                  Thread.sleep(50);
                }
                return null;
              });
      RawH2Client.Frame goAway = c.await(f -> f.type() == RawH2Client.GOAWAY);
      pinging.set(false);
      assertThat(goAway).isNotNull();
      assertThat(goAway.errorCode()).isEqualTo(RawH2Client.NO_ERROR);
      assertThat(c.closedByServer()).isTrue();
      try {
        pings.get(10, TimeUnit.SECONDS);
      } catch (java.util.concurrent.ExecutionException e) {
        assertThat(e.getCause()).isInstanceOf(java.io.IOException.class); // the server hung up
      }
    }
  }

  @Test
  void anHttp1ConnectionPastItsMaximumAgeIsToldToCloseOnItsNextAnswer() throws Exception {
    start(InboundLimits.builder().maxConnectionAge(Duration.ofMillis(200), null).build());
    try (RawClient c = new RawClient(port())) {
      c.send(RawClient.request("echo", 1)).send("a");
      RawClient.Res first = c.read();
      assertThat(first.headers()).doesNotContainKey("connection");
      Thread.sleep(100); // not past its age yet, but busy when it is reached
      c.send(RawClient.request("block", 0));
      Thread.sleep(300);
      blocked.complete(Response.of(Body.of("done".getBytes(UTF_8))));
      RawClient.Res last = c.read();
      assertThat(last.body()).isEqualTo("done");
      assertThat(last.headers()).containsEntry("connection", "close");
      assertThat(c.closedByServer()).isTrue();
    }
    try (RawClient c = new RawClient(port())) {
      Thread.sleep(300); // idle when its age is reached: closed at once
      assertThat(c.closedByServer()).isTrue();
    }
  }

  @Test
  void anH2cConnectionPastItsMaximumAgeGetsGoAwayAndFinishesItsCalls() throws Exception {
    start(InboundLimits.builder().maxConnectionAge(Duration.ofMillis(200), null).build());
    try (RawH2Client c = new RawH2Client(port())) {
      c.headers(1, RawH2Client.call("block", 0), true);
      RawH2Client.Frame goAway = c.await(f -> f.type() == RawH2Client.GOAWAY);
      assertThat(goAway.errorCode()).isEqualTo(RawH2Client.NO_ERROR);
      blocked.complete(Response.of(Body.of("done".getBytes(UTF_8))));
      RawH2Client.Frame answer = c.await(f -> f.type() == RawH2Client.HEADERS);
      assertThat(answer.stream()).isEqualTo(1);
      assertThat(answer.status()).isEqualTo(200);
      assertThat(c.closedByServer()).isTrue();
    }
  }

  @Test
  void aConnectionPastItsAgeAndGraceIsClosedWithItsCallsCancelled() throws Exception {
    start(
        InboundLimits.builder()
            .maxConnectionAge(Duration.ofMillis(200), Duration.ofMillis(300))
            .build());
    try (RawH2Client c = new RawH2Client(port())) {
      c.headers(1, RawH2Client.call("block", 0), true);
      assertThat(c.await(f -> f.type() == RawH2Client.GOAWAY)).isNotNull();
      assertThat(c.closedByServer()).isTrue();
    }
    assertThat(blockedCancelled.get(10, TimeUnit.SECONDS).code()).isEqualTo(Code.CANCELLED);
  }

  private static boolean readToEnd(InputStream in) throws Exception {
    byte[] drop = new byte[4096];
    try {
      while (in.read(drop) >= 0) {
        // drop
      }
    } catch (SocketException reset) {
      // closed too
    }
    return true;
  }
}
