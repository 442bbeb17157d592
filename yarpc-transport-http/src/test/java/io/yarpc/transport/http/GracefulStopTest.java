package io.yarpc.transport.http;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.Call;
import io.yarpc.Dispatcher;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Graceful stop of the inbound: the listening socket closes at once, in-flight calls finish within the
 * grace period (their HTTP/1.1 connections close after the response, HTTP/2 connections get GOAWAY), idle
 * connections are closed, and calls still running when the grace period ends are cut off and cancelled.
 */
class GracefulStopTest {
  private HttpTransport transport;
  private HttpInbound inbound;
  private Dispatcher dispatcher;
  private final CountDownLatch started = new CountDownLatch(1);
  private final CountDownLatch release = new CountDownLatch(1);
  private final CompletableFuture<Code> cancelled = new CompletableFuture<>();

  private void start(Consumer<HttpInbound.Builder> config) {
    transport = HttpTransport.builder().eventLoopThreads(2).build();
    HttpInbound.Builder b = transport.inboundBuilder();
    config.accept(b);
    inbound = b.build();
    dispatcher = Dispatcher.builder(YarpcTestService.NAME).inbound(inbound).build();
    dispatcher.register(
        Procedure.builder("slow")
            .unary(
                r -> {
                  Call call = Call.current();
                  call.onCancel(() -> cancelled.complete(call.cancellation().code()));
                  started.countDown();
                  try {
                    release.await();
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                  return CompletableFuture.completedFuture(
                      Response.of(Body.of("done".getBytes(UTF_8))));
                })
            .build(),
        Procedure.builder("echo")
            .unary(
                r ->
                    CompletableFuture.completedFuture(Response.of(Body.of(r.body().toByteArray()))))
            .build());
    dispatcher.start();
  }

  @AfterEach
  void stop() {
    release.countDown();
    dispatcher.stop();
  }

  private Thread stopInBackground() {
    Thread t = new Thread(inbound::stop, "inbound-stop");
    t.start();
    return t;
  }

  private void awaitListenerClosed() throws Exception {
    int port = inbound.address().getPort();
    for (int i = 0; i < 1000; i++) {
      try {
        new Socket(InetAddress.getLoopbackAddress(), port).close();
        Thread.sleep(5);
      } catch (ConnectException refused) {
        return;
      }
    }
    throw new AssertionError("the inbound still accepts connections");
  }

  @Test
  void inFlightHttp1CallFinishesAndItsConnectionCloses() throws Exception {
    start(b -> {});
    try (RawClient idle = new RawClient(inbound.address().getPort());
        RawClient busy = new RawClient(inbound.address().getPort())) {
      idle.send(RawClient.request("echo", 2)).send("hi");
      assertThat(idle.read().body()).isEqualTo("hi");
      busy.send(RawClient.request("slow", 0));
      assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();

      Thread stopping = stopInBackground();
      awaitListenerClosed();
      assertThat(idle.closedByServer()).as("idle keep-alive connection closed").isTrue();
      assertThat(stopping.isAlive()).as("stop waits for the in-flight call").isTrue();

      release.countDown();
      RawClient.Res res = busy.read();
      assertThat(res.status()).isEqualTo(200);
      assertThat(res.body()).isEqualTo("done");
      assertThat(res.headers()).containsEntry("connection", "close");
      assertThat(busy.closedByServer()).isTrue();
      stopping.join(10_000);
      assertThat(stopping.isAlive()).isFalse();
    }
    assertThat(inbound.activeRequests()).isZero();
  }

  @Test
  void inFlightHttp2CallFinishes() throws Exception {
    start(b -> {});
    HttpTransport clientTransport = HttpTransport.builder().eventLoopThreads(1).build();
    HttpOutbound out =
        clientTransport.singleOutboundBuilder(inbound.hostPort()).http2(true).build();
    out.start();
    try {
      CompletableFuture<Response> call = out.call(Request.of(meta("slow"), Body.empty()));
      assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
      Thread stopping = stopInBackground();
      awaitListenerClosed();
      assertThat(stopping.isAlive()).isTrue();
      release.countDown();
      Response r = call.get(10, TimeUnit.SECONDS);
      try {
        assertThat(new String(r.body().toByteArray(), UTF_8)).isEqualTo("done");
      } finally {
        r.body().release();
      }
      stopping.join(10_000);
      assertThat(stopping.isAlive()).isFalse();
    } finally {
      out.stop();
      clientTransport.stop();
    }
  }

  @Test
  void callsStillRunningAfterTheGracePeriodAreCutOff() throws Exception {
    start(b -> b.shutdownTimeout(Duration.ofMillis(100)));
    HttpTransport clientTransport = HttpTransport.builder().eventLoopThreads(1).build();
    HttpOutbound out = clientTransport.singleOutbound(inbound.hostPort());
    out.start();
    try {
      CompletableFuture<Response> call = out.call(Request.of(meta("slow"), Body.empty()));
      assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
      inbound.stop(); // returns once the grace period is over
      try {
        Response r = call.get(10, TimeUnit.SECONDS);
        r.body().release();
        throw new AssertionError("the call should have been cut off");
      } catch (ExecutionException e) {
        assertThat(((YarpcException) e.getCause()).code()).isEqualTo(Code.UNAVAILABLE);
      }
      assertThat(cancelled.get(10, TimeUnit.SECONDS)).isEqualTo(Code.CANCELLED);
    } finally {
      out.stop();
      clientTransport.stop();
    }
  }

  private static RequestMeta meta(String procedure) {
    return RequestMeta.builder()
        .caller("client")
        .service(YarpcTestService.NAME)
        .procedure(procedure)
        .encoding("raw")
        .deadline(Deadline.after(Duration.ofSeconds(20)))
        .build();
  }
}
