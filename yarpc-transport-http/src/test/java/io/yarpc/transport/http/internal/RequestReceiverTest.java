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
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.yarpc.errors.Code;
import io.yarpc.transport.InboundLimits;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
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
  private PendingBytes pending;
  private ConnectionBudget budget;
  private final TestReceiver self = new TestReceiver();

  /** Stands for the connection (or stream) in the budget: records pauses. */
  private static final class TestReceiver implements ConnectionBudget.Receiver {
    boolean paused;
    int released;

    @Override
    public void pause() {
      paused = true;
    }

    @Override
    public void resume() {
      paused = false;
    }

    @Override
    public void released() {
      released++;
    }

    @Override
    public boolean isPaused() {
      return paused;
    }
  }

  private void open(int maxRequestSize, boolean http2) {
    open(maxRequestSize, http2, 1 << 20, 1 << 20);
  }

  private void open(int maxRequestSize, boolean http2, long perConnection, long perInbound) {
    InboundSettings settings =
        new InboundSettings(
            InboundLimits.builder()
                .maxRequestSize(maxRequestSize)
                .maxHeaderBytes(8192)
                .maxHeaderCount(10)
                .maxRequestLineLength(512)
                .readTimeout(Duration.ofMillis(300))
                .maxPendingBytesPerConnection(perConnection)
                .maxPendingBytes(perInbound)
                .build(),
            true,
            0,
            "/health",
            io.yarpc.transport.DeadlinePolicy.strict());
    receiver = new RequestReceiver(settings, http2, received::add);
    channel =
        new EmbeddedChannel(
            new ChannelInboundHandlerAdapter() {
              @Override
              public void handlerAdded(ChannelHandlerContext ctx) {
                pending = new PendingBytes(perInbound);
                budget = new ConnectionBudget(pending, perConnection, ctx.executor());
                receiver.attach(ctx, budget, self);
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
    req.headers().set("Host", "test"); // HTTP/1.1 requires it (RFC 9112 section 3.2)
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
    HttpRequest longLine = head(0);
    longLine.setDecoderResult(DecoderResult.failure(new TooLongHttpLineException("too long")));
    channel.writeInbound(longLine);
    assertThat(only().rejectionStatus()).isEqualTo(414);
    assertThat(only().rejection().code()).isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(only().rejection().getMessage())
        .isEqualTo("request line is longer than the limit of 512 bytes");
    close();
    received.clear();

    open(1024, false);
    HttpRequest tooMany = head(0);
    tooMany.setDecoderResult(DecoderResult.failure(new CountedHeaders.TooManyHeadersException(10)));
    channel.writeInbound(tooMany);
    assertThat(only().rejectionStatus()).isEqualTo(431);
    assertThat(only().rejection().getMessage()).isEqualTo("request has more than 10 header fields");
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
  void eachRequestOnAKeepAliveConnectionGetsItsWholeReceiveTime() {
    // one timer serves the connection: started for the first request, it finds the second one
    // under way when it fires, and waits for what is left of that request's time
    open(1024, false);
    channel.writeInbound(head(3), last("abc"));
    assertThat(received).hasSize(1);
    channel.advanceTimeBy(200, TimeUnit.MILLISECONDS);
    receiver.requestBytesArrived(); // the second request's first bytes, at 200 ms
    channel.writeInbound(head(10), chunk("abc"));
    channel.advanceTimeBy(100, TimeUnit.MILLISECONDS); // 300 ms: the first request's time is up
    channel.runScheduledPendingTasks();
    channel.advanceTimeBy(199, TimeUnit.MILLISECONDS);
    channel.runScheduledPendingTasks();
    assertThat(received).as("299 ms into the second request").hasSize(1);
    channel.advanceTimeBy(1, TimeUnit.MILLISECONDS);
    channel.runScheduledPendingTasks();
    assertThat(received).hasSize(2);
    assertThat(received.get(1).rejectionStatus()).isEqualTo(408);
    assertThat(received.get(1).rejection().getMessage())
        .isEqualTo("timed out reading the request after 300ms");
  }

  @Test
  void aCompleteRequestLeavesNothingToTimeOut() {
    open(1024, false);
    channel.writeInbound(head(3), last("abc"));
    channel.advanceTimeBy(10, TimeUnit.SECONDS);
    channel.runScheduledPendingTasks();
    assertThat(only().rejection()).isNull();
    assertThat(receiver.isStopped()).isFalse();
  }

  @Test
  void theTimerWaitsWhileTheServerPausedReceiving() {
    open(1024, false);
    channel.writeInbound(head(10));
    self.paused = true; // a pipelined request waits, the budget is spent, or answers are not read
    channel.advanceTimeBy(300, TimeUnit.MILLISECONDS);
    channel.runScheduledPendingTasks();
    assertThat(received).as("not the client's fault").isEmpty();
    self.paused = false;
    channel.advanceTimeBy(300, TimeUnit.MILLISECONDS);
    channel.runScheduledPendingTasks();
    assertThat(only().rejectionStatus()).isEqualTo(408);
  }

  @Test
  void receivedBytesAreHeldUntilTheBodyIsHandedOn() {
    open(1024, false);
    channel.writeInbound(head(6), chunk("abc"));
    assertThat(budget.held()).isEqualTo(3);
    assertThat(pending.total()).isEqualTo(3);
    channel.writeInbound(last("def"));
    Exchange ex = only();
    assertThat(budget.held()).as("waiting for its turn: still held").isEqualTo(6);
    ex.takeBody().release();
    assertThat(budget.held()).isZero();
    assertThat(pending.total()).isZero();
    assertThat(self.released).isEqualTo(1);
  }

  @Test
  void aConnectionOverItsBudgetPausesButMayFinishItsOneRequest() {
    open(1024, false, 4, 1 << 20);
    channel.writeInbound(head(10), chunk("abcdef"));
    assertThat(self.paused).as("its only request may go past the budget").isFalse();
    channel.writeInbound(last("ghij"));
    Exchange first = only();
    received.clear();
    channel.writeInbound(head(2), chunk("k"));
    assertThat(self.paused)
        .as("holding a waiting request: the next one is not received past the budget")
        .isTrue();
    first.takeBody().release();
    assertThat(self.paused).as("resumed once the waiting body was handed on").isFalse();
    receiver.close();
  }

  @Test
  void theInboundBudgetPausesEveryConnectionButTheExemptOne() {
    open(1024, false, 1 << 20, 4);
    ConnectionBudget other = new ConnectionBudget(pending, 1 << 20, channel.eventLoop());
    TestReceiver otherSelf = new TestReceiver();
    other.startReceiving(otherSelf);
    other.add(otherSelf, 5); // the other connection spent the inbound's budget, and is exempt
    assertThat(otherSelf.paused).isFalse();
    channel.writeInbound(head(10), chunk("ab"));
    assertThat(self.paused).as("over the inbound's budget, not exempt").isTrue();
    other.stopReceiving(otherSelf); // its request is complete: the exemption is free
    channel.runPendingTasks();
    assertThat(self.paused).as("takes the exemption").isFalse();
    other.release(otherSelf, 5);
    receiver.close();
    assertThat(pending.total()).isZero();
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
