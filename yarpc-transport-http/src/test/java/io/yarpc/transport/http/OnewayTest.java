package io.yarpc.transport.http;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.Dispatcher;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Oneway over HTTP (docs/spec/model.md §8.7): the inbound answers 200 once the whole body has arrived and
 * the call was accepted, before the handler runs to its end; the handler's own failure is not the client's
 * concern; a oneway call without TTL is refused with 400 {@code missing TTL}.
 */
class OnewayTest {
  @ParameterizedTest(name = "http2={0}")
  @ValueSource(booleans = {false, true})
  void ackComesBeforeTheHandlerFinishes(boolean http2) throws Exception {
    CountDownLatch handlerMayFinish = new CountDownLatch(1);
    CompletableFuture<String> received = new CompletableFuture<>();
    HttpTransport server = HttpTransport.builder().eventLoopThreads(1).build();
    HttpInbound inbound = server.inbound();
    Dispatcher d = Dispatcher.builder("oneway").inbound(inbound).build();
    d.register(
        Procedure.builder("fire")
            .oneway(
                r -> {
                  received.complete(new String(r.body().toByteArray(), UTF_8));
                  try {
                    handlerMayFinish.await();
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                  return CompletableFuture.completedFuture(null);
                })
            .build(),
        Procedure.builder("fail")
            .oneway(r -> CompletableFuture.failedFuture(new RuntimeException("ignored")))
            .build());
    d.start();
    HttpTransport client = HttpTransport.builder().eventLoopThreads(1).build();
    HttpOutbound out = client.singleOutboundBuilder(inbound.hostPort()).http2(http2).build();
    out.start();
    try {
      RequestMeta meta =
          RequestMeta.builder()
              .caller("c")
              .service("oneway")
              .procedure("fire")
              .encoding("raw")
              .deadline(Deadline.after(Duration.ofSeconds(10)))
              .build();
      byte[] body = "x".repeat(200_000).getBytes(UTF_8);
      assertThat(out.callOneway(Request.of(meta, Body.of(body))).get(10, TimeUnit.SECONDS))
          .isNull();
      assertThat(received.get(10, TimeUnit.SECONDS))
          .hasSize(200_000); // the handler got the whole body
      assertThat(handlerMayFinish.getCount())
          .as("acknowledged while the handler still runs")
          .isEqualTo(1);
      handlerMayFinish.countDown();

      RequestMeta failing = meta.toBuilder().procedure("fail").build();
      assertThat(out.callOneway(Request.of(failing, Body.empty())).get(10, TimeUnit.SECONDS))
          .isNull();
    } finally {
      handlerMayFinish.countDown();
      out.stop();
      client.stop();
      d.stop();
    }
  }

  @Test
  void onewayWithoutTtlIsRefused() throws Exception {
    HttpTransport server = HttpTransport.builder().eventLoopThreads(1).build();
    HttpInbound inbound = server.inbound();
    Dispatcher d = Dispatcher.builder(YarpcTestService.NAME).inbound(inbound).build();
    d.register(
        Procedure.builder("fire").oneway(r -> CompletableFuture.completedFuture(null)).build());
    d.start();
    try (RawClient c = new RawClient(inbound.address().getPort())) {
      c.send(RawClient.request("fire", 0).replace("Context-TTL-MS: 10000\r\n", ""));
      RawClient.Res res = c.read();
      assertThat(res.status()).isEqualTo(400);
      assertThat(res.body()).isEqualTo("missing TTL\n");
      assertThat(res.headers()).containsEntry("rpc-error-code", "invalid-argument");
    } finally {
      d.stop();
    }
  }

  @Test
  void onewayBeyondAProceduresConcurrencyLimitIsRefusedNotAcknowledged() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch entered = new CountDownLatch(1);
    HttpTransport server = HttpTransport.builder().eventLoopThreads(1).build();
    HttpInbound inbound = server.inbound();
    Dispatcher d = Dispatcher.builder(YarpcTestService.NAME).inbound(inbound).build();
    d.register(
        Procedure.builder("fire")
            .maxConcurrentCalls(1)
            .oneway(
                r -> {
                  entered.countDown();
                  try {
                    release.await(10, TimeUnit.SECONDS);
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                  return CompletableFuture.completedFuture(null);
                })
            .build());
    d.start();
    try (RawClient c = new RawClient(inbound.address().getPort())) {
      c.send(RawClient.request("fire", 0));
      assertThat(c.read().status()).isEqualTo(200);
      assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();

      // the one place is taken: the next call is refused, not acknowledged and dropped
      c.send(RawClient.request("fire", 0));
      RawClient.Res refused = c.read();
      assertThat(refused.headers()).containsEntry("rpc-error-code", "resource-exhausted");
      assertThat(refused.body())
          .startsWith("procedure \"fire\" of service \"yarpc-test\" is at its limit of 1");

      release.countDown();
    } finally {
      release.countDown();
      d.stop();
    }
  }
}
