package io.yarpc.transport.http.internal;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.GoDurations;
import io.yarpc.netty.internal.Http1Heads;
import io.yarpc.netty.internal.IoErrors;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Assembles the requests of one HTTP/1.1 connection or one HTTP/2 stream from Netty {@link HttpObject}s
 * and enforces the receive limits of {@code InboundLimits}: body size ({@code maxRequestSize}, 413,
 * checked against {@code content-length} before any {@code 100 Continue} and against the bytes as they
 * come), request line (414) and header block (431, both found by the codec), header count (431, found by
 * {@link CountedHeaders} or {@link Http2ServerStream}), malformed input (400: also an HTTP/1.1 head
 * without a valid {@code Host}, see {@link Http1Heads}; a major version other than 1, 505)
 * and receive time ({@code
 * readTimeout}, 408, from a request's first byte to its last; time the server itself stopped reading does
 * not count). Each complete request, or the rejection of the one being received, goes to the sink as an
 * {@link Exchange}. After a rejection, or once {@link #stop()} is called, nothing more is read: every
 * later message is released.
 *
 * <p><b>Pending bytes.</b> The body bytes it keeps are counted in the connection's {@link ConnectionBudget}
 * as they arrive, which may pause this receiver; a whole message's array ({@link ReceivedContent}) is
 * reserved in full at its first byte, only if the budget's rules for reservations allow it then ({@link
 * PendingBytes}). They leave the budget inside the {@link Exchange}, which gives them back when the body
 * is handed to the call or dropped, or here when a request being received is dropped.
 *
 * <p><b>Threads.</b> Event loop only, like the channel handler that feeds it.
 *
 * <p><b>Ownership.</b> {@link #read} takes over every message it is given: it releases it, or keeps its
 * content in a {@link ReceivedContent} (HTTP/1.1: the received buffers; HTTP/2: the stream's own copy).
 * That content belongs to the receiver until it leaves inside an {@link Exchange};
 * {@link #releaseReceived()} gives back a request still being received.
 */
final class RequestReceiver {
  private final InboundSettings settings;
  private final boolean http2;
  private final Consumer<Exchange> sink;

  private ChannelHandlerContext ctx;
  private ConnectionBudget budget;
  private ConnectionBudget.Receiver self;
  private HttpRequest head;
  private long held; // bytes of the request being received, counted in the budget
  private long unfilled; // of held: a whole-message array's bytes not received yet
  private ReceivedContent content;
  private boolean discarding; // drop everything until the end of the current request
  private ScheduledFuture<?> readTimer;
  private boolean timing; // a request is being received and timed
  private long receivingSince; // when timing: the loop's ticker at the request's first byte
  private boolean stopped; // no more requests on this connection or stream

  /** A receiver for an HTTP/1.1 connection ({@code http2} false) or an HTTP/2 stream, feeding {@code sink}. */
  RequestReceiver(InboundSettings settings, boolean http2, Consumer<Exchange> sink) {
    this.settings = settings;
    this.http2 = http2;
    this.sink = sink;
  }

  /**
   * Binds the receiver to its channel (from the handler's {@code handlerAdded}) and to the budget its
   * bytes are counted in, as {@code self}.
   */
  void attach(ChannelHandlerContext ctx, ConnectionBudget budget, ConnectionBudget.Receiver self) {
    this.ctx = ctx;
    this.budget = budget;
    this.self = self;
  }

  /** Whether part of a request (at least its head) has arrived and it is not complete yet. */
  boolean isReceiving() {
    return head != null;
  }

  /** Whether reading has stopped for good (a rejection, a close decided, the channel closed). */
  boolean isStopped() {
    return stopped;
  }

  /** Stops reading for good: later messages are released unread, and no receive timer starts. */
  void stop() {
    stopped = true;
  }

  /**
   * Starts the receive timer at the first byte of a request (HTTP/1.1: called by {@link ReadStartHandler};
   * HTTP/2: by the stream at the end of the read that brought its head, when the request is still
   * incomplete, so most requests, whole in one read, need no timer).
   *
   * <p>HTTP/1.1 keeps one timer per connection rather than one per request: a request's end only clears
   * the request's start, and the timer, when it fires, looks at the request being received then (if
   * any) and sleeps again for what is left of its time. So a keep-alive connection schedules about one
   * task per read timeout, not one per request.
   */
  void requestBytesArrived() {
    if (stopped) {
      return;
    }
    if (!timing) {
      timing = true;
      receivingSince = ctx.executor().ticker().nanoTime();
    }
    if (readTimer == null) {
      scheduleReadTimer(settings.readTimeoutNanos());
    }
  }

  private void scheduleReadTimer(long delayNanos) {
    readTimer = ctx.executor().schedule(this::readTimedOut, delayNanos, TimeUnit.NANOSECONDS);
  }

  /** Takes one message from the codec. */
  void read(Object msg) {
    if (!(msg instanceof HttpObject) || stopped) {
      ReferenceCountUtil.release(msg);
      return;
    }
    DecoderResult result = ((HttpObject) msg).decoderResult();
    if (result.isFailure()) {
      ReferenceCountUtil.release(msg);
      malformed(result.cause());
      return;
    }
    if (msg instanceof HttpRequest) {
      onHead((HttpRequest) msg);
    }
    if (msg instanceof HttpContent) {
      onContent((HttpContent) msg);
    } else {
      ReferenceCountUtil.release(msg);
    }
  }

  /** The channel is gone: stops reading, the timer, and releases a request being received. */
  void close() {
    stopped = true;
    timing = false;
    cancelReadTimer();
    releaseReceived();
    head = null;
  }

  /** Releases the content of a request being received, if any, and gives its bytes back to the budget. */
  void releaseReceived() {
    if (content != null) {
      content.release();
      content = null;
    }
    if (budget != null) {
      budget.stopReceiving(self);
      releaseUnfilled();
      long n = held;
      held = 0;
      budget.release(self, n);
    }
  }

  /**
   * The request being received has more header fields than {@code max} (HTTP/2, found before its headers
   * were converted): answered 431, and the stream takes nothing more.
   */
  void tooManyHeaders(int max) {
    if (stopped) {
      return;
    }
    reject(
        YarpcException.of(Code.INVALID_ARGUMENT, "request has more than %d header fields", max),
        431);
  }

  private void onHead(HttpRequest req) {
    if (!http2) {
      requestBytesArrived(); // HTTP/2: at the end of the read, if the request is still incomplete
    }
    releaseReceived();
    head = req;
    discarding = false;
    budget.startReceiving(self);
    if (!http2) {
      Http1Heads.Problem bad = Http1Heads.check(req);
      if (bad != null) {
        reject(RequestDecoder.headError(bad), bad.status());
        return;
      }
    }
    long declared = HttpUtil.getContentLength(req, -1L);
    if (declared > settings.maxRequestSize()) {
      tooLarge();
      return;
    }
    if (!http2 && HttpUtil.is100ContinueExpected(req)) {
      ctx.writeAndFlush(
          new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE));
    }
    req.headers().remove(HttpHeaderNames.EXPECT);
    content = new ReceivedContent(ctx.alloc(), http2, declared, true); // whole: see data()
  }

  private void onContent(HttpContent chunk) {
    if (accepts(chunk.content().readableBytes())) {
      int n = chunk.content().readableBytes();
      content.append(chunk);
      counted(n);
    } else {
      chunk.release();
    }
    if (chunk instanceof LastHttpContent) {
      onLast();
    }
  }

  /**
   * HTTP/2: the head of the stream's request, its fields a view of the stream's HEADERS ({@link
   * Http2HeadersView}); {@code end}: the request has no body.
   */
  void head(HttpRequest req, boolean end) {
    if (stopped) {
      return;
    }
    onHead(req);
    if (end) {
      onLast();
    }
  }

  /**
   * HTTP/2: a DATA frame's bytes, copied (the frame stays the caller's); {@code end}: the last of the
   * request (also for the trailers that end it, with no bytes).
   */
  void data(ByteBuf data, boolean end) {
    if (stopped) {
      return;
    }
    int n = data.readableBytes();
    if (n > 0 && accepts(n)) {
      long before = content.footprint();
      if (content.wholePending()) {
        // the array about to be made counts in full, reserved in the budget together with the
        // check that it fits (or the body goes into pieces of what arrives)
        long whole = content.wholeLength();
        if (budget.tryReserve(self, whole)) {
          held += whole;
          before += whole;
          unfilled = whole;
        } else {
          content.piecesOnly();
        }
      }
      content.copy(data);
      counted(content.footprint() - before);
      if (unfilled > 0) {
        long arrived = Math.min(unfilled, n);
        unfilled -= arrived;
        budget.filled(arrived);
      }
    }
    if (end) {
      onLast();
    }
  }

  /** Whether {@code n} more body bytes are kept: false while discarding, or past the size limit (413). */
  private boolean accepts(int n) {
    if (discarding || head == null || content == null) {
      return false;
    }
    if (content.size() + n > settings.maxRequestSize()) {
      tooLarge();
      return false;
    }
    return true;
  }

  private void releaseUnfilled() {
    if (unfilled > 0) {
      budget.filled(unfilled);
      unfilled = 0;
    }
  }

  /** {@code n} bytes of memory were taken for the body: counted in the connection's budget. */
  private void counted(long n) {
    held += n;
    budget.add(self, n);
  }

  private void onLast() {
    stopReadTimer();
    if (discarding || head == null) {
      discarding = false;
      head = null;
      return;
    }
    releaseUnfilled(); // a body shorter than it declared (Netty's decoder resets such streams)
    Exchange ex = Exchange.received(head, content.take(), http2, budget, self, held);
    head = null;
    content = null;
    budget.complete(self, held);
    held = 0;
    sink.accept(ex);
  }

  /** Answers the request being received with {@code status}; the connection (or stream) closes after. */
  private void reject(YarpcException error, int status) {
    stopReadTimer();
    Exchange ex = Exchange.rejected(head, error, status, http2);
    releaseReceived();
    head = null;
    discarding = true;
    stopped = true; // nothing more is read from this connection or stream
    sink.accept(ex);
  }

  private void tooLarge() {
    reject(
        YarpcException.of(
            Code.RESOURCE_EXHAUSTED,
            "request body is larger than the limit of %d bytes",
            settings.maxRequestSize()),
        413);
  }

  private void malformed(Throwable cause) {
    if (cause instanceof CountedHeaders.TooManyHeadersException) {
      reject(
          YarpcException.of(
              Code.INVALID_ARGUMENT,
              "request has more than %d header fields",
              settings.limits().maxHeaderCount()),
          431);
    } else if (cause instanceof TooLongHttpLineException) {
      reject(
          YarpcException.of(
              Code.INVALID_ARGUMENT,
              "request line is longer than the limit of %d bytes",
              settings.limits().maxRequestLineLength()),
          414);
    } else if (cause instanceof TooLongHttpHeaderException) {
      reject(
          YarpcException.of(
              Code.INVALID_ARGUMENT,
              "request header fields are larger than the limit of %d bytes",
              settings.limits().maxHeaderBytes()),
          431);
    } else {
      reject(
          YarpcException.of(
              Code.INVALID_ARGUMENT, "malformed HTTP request: %s", IoErrors.describe(cause)),
          400);
    }
  }

  private void readTimedOut() {
    readTimer = null;
    if (stopped || !timing) {
      return; // the request it was started for is complete; the next one starts it again
    }
    long now = ctx.executor().ticker().nanoTime();
    if (self.isPaused()) {
      // we stopped receiving ourselves (a pipelined request waits, the budget is spent, the client
      // does not read our answers): not the client's fault, so its time counts again from now
      receivingSince = now;
      scheduleReadTimer(settings.readTimeoutNanos());
      return;
    }
    long left = settings.readTimeoutNanos() - (now - receivingSince);
    if (left > 0) {
      scheduleReadTimer(left); // a later request than the one it was started for
      return;
    }
    reject(
        YarpcException.of(
            Code.DEADLINE_EXCEEDED,
            "timed out reading the request after %s",
            GoDurations.format(Duration.ofNanos(settings.readTimeoutNanos()))),
        408);
  }

  /**
   * The request being received is complete or dropped: no longer timed. HTTP/2 cancels the stream's timer
   * (the stream takes no other request); HTTP/1.1 leaves the connection's timer to find nothing to time.
   */
  private void stopReadTimer() {
    timing = false;
    if (http2) {
      cancelReadTimer();
    }
  }

  private void cancelReadTimer() {
    if (readTimer != null) {
      readTimer.cancel(false);
      readTimer = null;
    }
  }
}
