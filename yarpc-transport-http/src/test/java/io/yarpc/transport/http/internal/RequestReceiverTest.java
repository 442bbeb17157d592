package io.yarpc.transport.http.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.yarpc.errors.Code;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Requests assembled from codec messages and the receive limits, on an {@link EmbeddedChannel}. */
class RequestReceiverTest {
  private final List<Exchange> received = new ArrayList<>();
  private RequestReceiver receiver;
  private EmbeddedChannel channel;

  private void open(int maxBodySize, boolean http2) {
    InboundSettings settings =
        new InboundSettings(
            maxBodySize,
            8192,
            TimeUnit.SECONDS.toNanos(60),
            TimeUnit.MILLISECONDS.toNanos(300),
            true,
            100,
            0,
            "/health",
            io.yarpc.transport.DeadlinePolicy.strict());
    receiver = new RequestReceiver(settings, http2, received::add);
    channel =
        new EmbeddedChannel(
            new ChannelInboundHandlerAdapter() {
              @Override
              public void handlerAdded(ChannelHandlerContext ctx) {
                receiver.attach(ctx);
              }

              @Override
              public void channelRead(ChannelHandlerContext ctx, Object msg) {
                receiver.read(msg);
              }
            });
    channel.freezeTime();
  }

  @AfterEach
  void close() {
    receiver.close();
    for (Exchange ex : received) {
      ex.finish();
    }
    channel.finishAndReleaseAll();
  }

  private static HttpRequest head(long contentLength, String... headers) {
    HttpRequest req = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/");
    req.headers().set("Rpc-Service", "svc");
    if (contentLength >= 0) {
      req.headers().set("Content-Length", contentLength);
    }
    for (int i = 0; i < headers.length; i += 2) {
      req.headers().set(headers[i], headers[i + 1]);
    }
    return req;
  }

  private static HttpContent chunk(String text) {
    return new DefaultHttpContent(Unpooled.copiedBuffer(text, StandardCharsets.US_ASCII));
  }

  private static LastHttpContent last(String text) {
    return new DefaultLastHttpContent(Unpooled.copiedBuffer(text, StandardCharsets.US_ASCII));
  }

  private Exchange only() {
    assertThat(received).hasSize(1);
    return received.get(0);
  }

  @Test
  void chunksBecomeOneBody() {
    for (boolean http2 : new boolean[] {false, true}) {
      open(1024, http2);
      channel.writeInbound(head(6), chunk("abc"), last("def"));
      Exchange ex = only();
      assertThat(ex.rejection()).isNull();
      assertThat(ex.context().service()).isEqualTo("svc");
      assertThat(ex.takeHead()).isNotNull();
      ByteBuf body = ex.takeBody();
      assertThat(body.toString(StandardCharsets.US_ASCII)).isEqualTo("abcdef");
      body.release();
      assertThat(receiver.isReceiving()).isFalse();
      close();
      received.clear();
    }
  }

  @Test
  void aDeclaredBodyOverTheLimitIsRejectedBeforeContinue() {
    open(4, false);
    HttpContent late = chunk("abcde");
    channel.writeInbound(head(5, "Expect", "100-continue"), late);
    Exchange ex = only();
    assertThat(ex.rejection().code()).isEqualTo(Code.RESOURCE_EXHAUSTED);
    assertThat(ex.rejection().getMessage())
        .isEqualTo("request body is larger than the limit of 4 bytes");
    assertThat(ex.rejectionStatus()).isEqualTo(413);
    assertThat(ex.context().service()).as("answered for the request's service").isEqualTo("svc");
    assertThat((Object) channel.readOutbound()).as("no 100 Continue").isNull();
    assertThat(receiver.isStopped()).isTrue();
    assertThat(late.refCnt()).as("what arrives later is released unread").isZero();
  }

  @Test
  void aStreamedBodyOverTheLimitIsRejectedAtTheChunkThatCrossesIt() {
    open(4, false);
    HttpContent crossing = chunk("cde");
    channel.writeInbound(head(-1), chunk("ab"), crossing, last(""));
    assertThat(only().rejectionStatus()).isEqualTo(413);
    assertThat(crossing.refCnt()).isZero();
  }

  @Test
  void continueOnlyOnHttp1() {
    open(1024, false);
    channel.writeInbound(head(1, "Expect", "100-continue"));
    FullHttpResponse cont = channel.readOutbound();
    assertThat(cont.status()).isEqualTo(HttpResponseStatus.CONTINUE);
    cont.release();
    channel.writeInbound(last("x"));
    assertThat(only().takeHead().headers().contains("Expect")).as("consumed").isFalse();
    close();

    open(1024, true);
    channel.writeInbound(head(1, "Expect", "100-continue"));
    assertThat((Object) channel.readOutbound()).isNull();
  }

  @Test
  void decoderFailures() {
    open(1024, false);
    HttpRequest tooLong = head(0);
    tooLong.setDecoderResult(DecoderResult.failure(new TooLongHttpHeaderException("too long")));
    channel.writeInbound(tooLong);
    Exchange ex = only();
    assertThat(ex.rejectionStatus()).isEqualTo(431);
    assertThat(ex.rejection().getMessage())
        .isEqualTo("request header fields are larger than the limit of 8192 bytes");
    assertThat(ex.context().service()).as("no head was decoded").isEmpty();
    close();
    received.clear();

    open(1024, false);
    HttpRequest garbage = head(0);
    garbage.setDecoderResult(DecoderResult.failure(new IllegalArgumentException("bad chunk size")));
    channel.writeInbound(garbage);
    assertThat(only().rejectionStatus()).isEqualTo(400);
    assertThat(only().rejection().getMessage()).isEqualTo("malformed HTTP request: bad chunk size");
  }

  @Test
  void aRequestThatTakesTooLongIsRejected() {
    open(1024, false);
    channel.writeInbound(head(10), chunk("abc"));
    channel.advanceTimeBy(299, TimeUnit.MILLISECONDS);
    channel.runScheduledPendingTasks();
    assertThat(received).isEmpty();
    channel.advanceTimeBy(1, TimeUnit.MILLISECONDS);
    channel.runScheduledPendingTasks();
    Exchange ex = only();
    assertThat(ex.rejectionStatus()).isEqualTo(408);
    assertThat(ex.rejection().getMessage()).isEqualTo("timed out reading the request after 300ms");
  }

  @Test
  void theTimerWaitsWhileReadingIsPausedForAPipelinedRequest() {
    open(1024, false);
    channel.writeInbound(head(10));
    channel.config().setAutoRead(false);
    channel.advanceTimeBy(300, TimeUnit.MILLISECONDS);
    channel.runScheduledPendingTasks();
    assertThat(received).as("not the client's fault").isEmpty();
    channel.config().setAutoRead(true);
    channel.advanceTimeBy(300, TimeUnit.MILLISECONDS);
    channel.runScheduledPendingTasks();
    assertThat(only().rejectionStatus()).isEqualTo(408);
  }

  @Test
  void closeReleasesARequestBeingReceived() {
    open(1024, false);
    HttpContent part = chunk("abc");
    channel.writeInbound(head(10), part);
    assertThat(receiver.isReceiving()).isTrue();
    assertThat(part.refCnt()).as("kept, not copied, on HTTP/1.1").isOne();
    receiver.close();
    assertThat(part.refCnt()).isZero();
    assertThat(receiver.isReceiving()).isFalse();
    HttpContent after = last("x");
    channel.writeInbound(after);
    assertThat(after.refCnt()).isZero();
    assertThat(received).isEmpty();
  }
}
