package io.yarpc.transport.http.internal;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpServerCodec;
import io.yarpc.transport.Body;
import io.yarpc.transport.HandlerSpec;
import io.yarpc.transport.InboundLimits;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.Router;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The handler wired to a real HTTP/1.1 codec on an {@link EmbeddedChannel}, with a router of its own (no
 * dispatcher): answers leave in request order whatever order the calls complete in.
 */
class ServerRequestHandlerTest {
  private final InboundState state = new InboundState();
  private final CompletableFuture<Response> slow = new CompletableFuture<>();
  private final EmbeddedChannel channel;

  ServerRequestHandlerTest() {
    state.router(
        new Router() {
          @Override
          public List<Procedure> procedures() {
            return List.of();
          }

          @Override
          public HandlerSpec choose(RequestMeta meta) {
            return HandlerSpec.unary(
                r -> {
                  r.body().release(); // no dispatcher here to do it
                  return meta.procedure().equals("slow")
                      ? slow
                      : CompletableFuture.completedFuture(
                          Response.of(Body.of("fast".getBytes(US_ASCII))));
                });
          }
        });
    InboundSettings settings =
        new InboundSettings(
            InboundLimits.builder().maxRequestSize(1024).maxHeaderBytes(8192).build(),
            true,
            0,
            null,
            io.yarpc.transport.DeadlinePolicy.strict());
    channel =
        new EmbeddedChannel(
            new HttpServerCodec(),
            new ServerRequestHandler(state, settings, ByteBufAllocator.DEFAULT));
  }

  @AfterEach
  void close() {
    channel.finishAndReleaseAll();
  }

  private static String request(String procedure, String... headers) {
    StringBuilder sb =
        new StringBuilder(
            "POST / HTTP/1.1\r\nHost: t\r\nRpc-Caller: c\r\nRpc-Service: s\r\n"
                + "Rpc-Procedure: "
                + procedure
                + "\r\nRpc-Encoding: raw\r\nContext-TTL-MS: 10000\r\nContent-Length: 1\r\n");
    for (String h : headers) {
      sb.append(h).append("\r\n");
    }
    return sb.append("\r\nx").toString();
  }

  private void send(String text) {
    channel.writeInbound(Unpooled.copiedBuffer(text, US_ASCII));
    channel.runPendingTasks();
  }

  /** Everything written so far, as text. */
  private String written() {
    StringBuilder sb = new StringBuilder();
    for (Object o; (o = channel.readOutbound()) != null; ) {
      ByteBuf b = (ByteBuf) o;
      sb.append(b.toString(US_ASCII));
      b.release();
    }
    return sb.toString();
  }

  @Test
  void pipelinedAnswersLeaveInRequestOrder() {
    send(request("slow") + request("fast"));
    assertThat(written()).as("the fast call waits for the slow one").isEmpty();
    assertThat(channel.config().isAutoRead()).as("no more is read while one waits").isFalse();
    assertThat(state.activeExchanges()).isEqualTo(2);

    slow.complete(Response.of(Body.of("slow".getBytes(US_ASCII))));
    channel.runPendingTasks();
    channel.runPendingTasks();
    String out = written();
    assertThat(out).startsWith("HTTP/1.1 200 OK");
    assertThat(out.indexOf("\r\n\r\nslow")).isPositive().isLessThan(out.indexOf("\r\n\r\nfast"));
    assertThat(state.activeExchanges()).isZero();
    assertThat(channel.config().isAutoRead()).isTrue();
    assertThat(channel.isOpen()).isTrue();
  }

  @Test
  void aClientThatAsksToCloseIsClosedAfterItsAnswer() {
    send(request("fast", "Connection: close"));
    assertThat(written()).contains("connection: close").endsWith("fast");
    assertThat(channel.isOpen()).isFalse();
    assertThat(state.activeExchanges()).isZero();
  }

  @Test
  void aRejectionIsAnsweredAndEndsTheConnection() {
    send("GARBAGE\r\n\r\n" + request("fast"));
    String out = written();
    assertThat(out)
        .startsWith("HTTP/1.1 400 Bad Request")
        .contains("connection: close")
        .contains("\r\n\r\nmalformed HTTP request: ")
        .doesNotContain("fast");
    assertThat(channel.isOpen()).isFalse();
    assertThat(state.activeExchanges()).isZero();
  }

  @Test
  void noRequestIsReadWhileTheClientDoesNotReadTheAnswers() {
    channel.config().setWriteBufferWaterMark(new WriteBufferWaterMark(8, 16));
    // an answer queued, not flushed: as when the socket is full
    channel.write(
        new io.netty.handler.codec.http.DefaultFullHttpResponse(
            io.netty.handler.codec.http.HttpVersion.HTTP_1_1,
            io.netty.handler.codec.http.HttpResponseStatus.OK,
            Unpooled.wrappedBuffer(new byte[64])));
    channel.runPendingTasks();
    assertThat(channel.isWritable()).isFalse();
    assertThat(channel.config().isAutoRead()).as("reading stops").isFalse();
    channel.flush();
    channel.runPendingTasks();
    assertThat(channel.isWritable()).isTrue();
    assertThat(channel.config().isAutoRead()).as("and resumes").isTrue();
    written();
  }
}
