package io.yarpc.transport.http.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The HTTP/1.1 exchange queue: order, pushing back on pipelining, keep-alive, draining. */
class Http1ExchangesTest {
  private final InboundState state = new InboundState();
  private final EmbeddedChannel channel = new EmbeddedChannel();
  private final Http1Exchanges exchanges = new Http1Exchanges(state, new ReadGate(channel));

  @AfterEach
  void close() {
    channel.finishAndReleaseAll();
  }

  private Exchange received(HttpVersion version, String... headers) {
    return received(version, Unpooled.EMPTY_BUFFER, headers);
  }

  private Exchange received(ByteBuf body) {
    return received(HttpVersion.HTTP_1_1, body);
  }

  /** A received exchange holding {@code body}, counted in as the handler does. */
  private Exchange received(HttpVersion version, ByteBuf body, String... headers) {
    HttpRequest req = new DefaultHttpRequest(version, HttpMethod.POST, "/");
    for (int i = 0; i < headers.length; i += 2) {
      req.headers().set(headers[i], headers[i + 1]);
    }
    Exchange ex = Exchange.received(req, body, false);
    state.exchangeStarted();
    return ex;
  }

  private Exchange received() {
    return received(HttpVersion.HTTP_1_1);
  }

  /** What the handler does when an exchange is over. */
  private Exchange finish(Exchange ex, boolean stopped) {
    assertThat(ex.finish()).isTrue();
    state.exchangeFinished();
    return exchanges.finished(ex, stopped);
  }

  private static FullHttpResponse response(HttpVersion version) {
    return new DefaultFullHttpResponse(version, HttpResponseStatus.OK);
  }

  @Test
  void oneAtATimeInOrderAndReadingPausesWhileOneWaits() {
    Exchange first = received();
    Exchange second = received();
    assertThat(exchanges.offer(first)).isTrue();
    assertThat(channel.config().isAutoRead()).isTrue();
    assertThat(exchanges.offer(second)).as("waits its turn").isFalse();
    assertThat(channel.config().isAutoRead()).as("TCP pushes back").isFalse();
    assertThat(exchanges.current()).isSameAs(first);

    assertThat(finish(first, false)).isSameAs(second);
    assertThat(exchanges.current()).isSameAs(second);
    assertThat(channel.config().isAutoRead()).isFalse();
    assertThat(finish(second, false)).isNull();
    assertThat(channel.config().isAutoRead()).as("nothing waits: read again").isTrue();
    assertThat(exchanges.isIdle()).isTrue();
    assertThat(state.activeExchanges()).isZero();
  }

  @Test
  void aStoppedConnectionDropsWhatWaitsReleasingItsBody() {
    Exchange first = received();
    ByteBuf body = Unpooled.buffer().writeByte(2);
    Exchange waiting = received(body);
    exchanges.offer(first);
    exchanges.offer(waiting);

    assertThat(finish(first, true)).as("nothing more is served").isNull();
    assertThat(waiting.isFinished()).isTrue();
    assertThat(body.refCnt()).isZero();
    assertThat(state.activeExchanges()).as("counted out").isZero();
    assertThat(exchanges.isIdle()).isTrue();
  }

  @Test
  void droppingReleasesTheWaitingBodies() {
    Exchange first = received();
    ByteBuf body = Unpooled.buffer().writeByte(2);
    Exchange waiting = received(body);
    exchanges.offer(first);
    exchanges.offer(waiting);
    exchanges.dropWaiting();
    assertThat(waiting.isFinished()).isTrue();
    assertThat(body.refCnt()).isZero();
    assertThat(state.activeExchanges()).isOne();
    finish(first, false);
  }

  @Test
  void keepAliveDecisions() {
    FullHttpResponse res = response(HttpVersion.HTTP_1_1);
    assertThat(exchanges.closeAfter(received(), res)).isFalse();
    assertThat(res.headers().contains("connection")).isFalse();

    res = response(HttpVersion.HTTP_1_1);
    assertThat(exchanges.closeAfter(received(HttpVersion.HTTP_1_1, "Connection", "close"), res))
        .isTrue();
    assertThat(res.headers().get("connection")).isEqualTo("close");

    res = response(HttpVersion.HTTP_1_0);
    assertThat(exchanges.closeAfter(received(HttpVersion.HTTP_1_0), res)).isTrue();
    assertThat(res.headers().get("connection")).isEqualTo("close");

    res = response(HttpVersion.HTTP_1_0);
    assertThat(
            exchanges.closeAfter(received(HttpVersion.HTTP_1_0, "Connection", "keep-alive"), res))
        .isFalse();
    assertThat(res.headers().get("connection")).as("told it is kept").isEqualTo("keep-alive");

    res = response(HttpVersion.HTTP_1_1);
    Exchange rejected =
        Exchange.rejected(null, YarpcException.of(Code.INVALID_ARGUMENT, "x"), 400, false);
    assertThat(exchanges.closeAfter(rejected, res)).isTrue();
    assertThat(res.headers().get("connection")).isEqualTo("close");
  }

  @Test
  void drainingClosesAnIdleConnectionNowAndABusyOneAfterItsAnswer() {
    assertThat(exchanges.drain(false)).as("idle").isTrue();
    assertThat(new Http1Exchanges(state, new ReadGate(channel)).drain(true))
        .as("a request is arriving")
        .isFalse();

    Http1Exchanges busy = new Http1Exchanges(state, new ReadGate(channel));
    Exchange ex = received();
    busy.offer(ex);
    assertThat(busy.drain(false)).isFalse();
    assertThat(busy.closeAfter(ex, response(HttpVersion.HTTP_1_1)))
        .as("closes after the answer")
        .isTrue();
    assertThat(ex.finish()).isTrue();
    state.exchangeFinished();
    busy.finished(ex, true);
  }
}
