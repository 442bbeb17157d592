package io.yarpc.transport.http.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.GoStrings;
import io.yarpc.internal.GoDurations;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.HandlerSpec;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.Router;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves YARPC requests arriving as Netty {@link HttpObject}s: on an HTTP/1.1 connection (one handler per
 * connection, requests answered in order) or on one HTTP/2 stream (one handler per stream, fed by
 * {@code Http2StreamFrameToHttpObjectCodec}).
 *
 * <p><b>Receiving.</b> The content chunks of a request are gathered in one buffer ({@link ReceivedContent}:
 * the received buffers themselves on HTTP/1.1, the stream's own copy on HTTP/2); the request {@link Body}
 * offers byte access over it ({@link ByteBuf#nioBuffers()}) and releases it, exactly once, when the
 * invocation releases the body. Limits: body size (413), header size (431, decoded by the codec), malformed
 * input (400), receive time (408).
 *
 * <p><b>Serving</b> follows docs/spec/wire-http.md §3.2: validate and route with {@link Router#choose},
 * then report an invalid TTL, then call the handler by type. A {@code GET} or {@code HEAD} of the health
 * path (when on) is answered first, in turn, from {@link InboundState#isServing()}. A unary response is
 * written when the handler's future completes; a oneway request is answered as soon as it is accepted.
 * When the client goes away the handler's future is cancelled.
 *
 * <p>All state is confined to the channel's event loop; handler completions hop onto it.
 */
public final class ServerRequestHandler extends ChannelInboundHandlerAdapter {
  private static final Logger log = LoggerFactory.getLogger(ServerRequestHandler.class);
  private static final String TRANSPORT_HTTP = "http";
  private static final long LINGER_NANOS = TimeUnit.SECONDS.toNanos(2);
  private static final String TRANSPORT_HTTP2 = "http2";
  private static final byte[] SERVING = "SERVING\n".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] NOT_SERVING = "NOT_SERVING\n".getBytes(StandardCharsets.US_ASCII);

  private final InboundState state;
  private final InboundSettings settings;
  private final ByteBufAllocator writeAllocator;
  private final boolean http2;

  private ChannelHandlerContext ctx;
  // receiving
  private HttpRequest head;
  private ReceivedContent content;
  private boolean discarding; // drop everything until the end of the current request
  private ScheduledFuture<?> readTimer;
  // serving
  private Exchange current;
  private final ArrayDeque<Exchange> queued = new ArrayDeque<>(2);
  private boolean closing; // no more requests on this connection or stream
  private boolean closeAfterResponse; // HTTP/1.1: close once the current responses are written

  /**
   * A handler for one HTTP/1.1 connection ({@code http2} false) or one HTTP/2 stream ({@code http2} true);
   * response bodies are allocated from {@code writeAllocator}.
   */
  public ServerRequestHandler(InboundState state, InboundSettings settings, ByteBufAllocator writeAllocator,
      boolean http2) {
    this.state = state;
    this.settings = settings;
    this.writeAllocator = writeAllocator;
    this.http2 = http2;
  }

  /** One received request and what its response needs. */
  private static final class Exchange {
    final InboundResponses.Context context;
    final boolean keepAlive;
    HttpRequest head;
    ByteBuf body; // owned until handed to the handler
    FullHttpResponse early; // an answer decided while receiving (413, 400...), written in turn
    boolean closeAfter;
    CompletableFuture<?> future; // the unary handler's result
    final AtomicBoolean finished = new AtomicBoolean();

    Exchange(InboundResponses.Context context, boolean keepAlive) {
      this.context = context;
      this.keepAlive = keepAlive;
    }
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
  }

  // ---------------------------------------------------------------------------------------------------
  // Receiving

  /** Starts the receive timer at the first byte of a request (HTTP/1.1: called by {@link ReadStartHandler}). */
  void requestBytesArrived() {
    if (readTimer == null && !closing) {
      readTimer = ctx.executor().schedule(this::readTimedOut, settings.readTimeoutNanos(), TimeUnit.NANOSECONDS);
    }
  }

  private void stopReadTimer() {
    if (readTimer != null) {
      readTimer.cancel(false);
      readTimer = null;
    }
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (!(msg instanceof HttpObject)) {
      ReferenceCountUtil.release(msg);
      return;
    }
    if (closing) {
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

  private void onHead(HttpRequest req) {
    requestBytesArrived();
    releaseReceived();
    head = req;
    discarding = false;
    HttpHeaders h = req.headers();
    long declared = HttpUtil.getContentLength(req, -1L);
    if (declared > settings.maxBodySize()) {
      tooLarge();
      return;
    }
    if (!http2 && HttpUtil.is100ContinueExpected(req)) {
      ctx.writeAndFlush(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE));
    }
    h.remove(HttpHeaderNames.EXPECT);
    content = new ReceivedContent(ctx.alloc(), http2, declared);
  }

  private void onContent(HttpContent chunk) {
    ByteBuf data = chunk.content();
    if (discarding || head == null || content == null) {
      chunk.release();
    } else if (content.size() + data.readableBytes() > settings.maxBodySize()) {
      chunk.release();
      tooLarge();
    } else {
      content.append(chunk);
    }
    if (chunk instanceof LastHttpContent) {
      onLast();
    }
  }

  private void onLast() {
    stopReadTimer();
    if (discarding || head == null) {
      discarding = false;
      head = null;
      return;
    }
    Exchange ex = newExchange(head);
    ex.head = head;
    ex.body = content.take();
    head = null;
    content = null;
    enqueue(ex);
  }

  private Exchange newExchange(HttpRequest req) {
    HttpHeaders h = req == null ? null : req.headers();
    String service = h == null ? "" : WireHeaders.get(h, WireHeaders.SERVICE);
    String encoding = h == null ? "" : WireHeaders.get(h, WireHeaders.ENCODING);
    boolean both = h != null && WireHeaders.TRUE.equals(h.get(WireHeaders.ACCEPTS_BOTH_RESPONSE_ERROR));
    HttpVersion version = http2 || req == null ? HttpVersion.HTTP_1_1 : req.protocolVersion();
    boolean keepAlive = req == null || HttpUtil.isKeepAlive(req);
    return new Exchange(new InboundResponses.Context(version, service, encoding, both), keepAlive);
  }

  /** Answers the request being received with {@code status} and closes the connection (or stream) after. */
  private void rejectReceiving(YarpcException error, int status) {
    stopReadTimer();
    Exchange ex = newExchange(head);
    ex.early = InboundResponses.error(ex.context, error, status, writeAllocator);
    ex.closeAfter = true;
    releaseReceived();
    head = null;
    discarding = true;
    closing = true; // nothing more is read from this connection or stream
    enqueue(ex);
  }

  private void tooLarge() {
    rejectReceiving(YarpcException.of(Code.RESOURCE_EXHAUSTED,
        "request body is larger than the limit of %d bytes", settings.maxBodySize()), 413);
  }

  private void malformed(Throwable cause) {
    if (cause instanceof TooLongHttpHeaderException || cause instanceof TooLongHttpLineException) {
      rejectReceiving(YarpcException.of(Code.INVALID_ARGUMENT,
          "request header fields are larger than the limit of %d bytes", settings.maxHeaderSize()), 431);
    } else {
      rejectReceiving(YarpcException.of(Code.INVALID_ARGUMENT, "malformed HTTP request: %s",
          YarpcException.describe(cause)), 400);
    }
  }

  private void readTimedOut() {
    readTimer = null;
    if (closing) {
      return;
    }
    if (!ctx.channel().config().isAutoRead()) {
      // we stopped reading ourselves (a pipelined request waits): not the client's fault
      requestBytesArrived();
      return;
    }
    rejectReceiving(YarpcException.of(Code.DEADLINE_EXCEEDED, "timed out reading the request after %s",
        GoDurations.format(Duration.ofNanos(settings.readTimeoutNanos()))), 408);
  }

  private void releaseReceived() {
    if (content != null) {
      content.release();
      content = null;
    }
  }

  // ---------------------------------------------------------------------------------------------------
  // Serving, in order

  private void enqueue(Exchange ex) {
    state.exchangeStarted();
    if (current == null) {
      start(ex);
    } else {
      queued.add(ex);
      ctx.channel().config().setAutoRead(false); // at most one request waits; TCP pushes back the rest
    }
  }

  private void start(Exchange ex) {
    current = ex;
    if (ex.early != null) {
      FullHttpResponse res = ex.early;
      ex.early = null;
      write(ex, res, true);
      return;
    }
    try {
      serve(ex);
    } catch (RuntimeException e) {
      log.error("unexpected failure serving an HTTP request", e);
      releaseBody(ex);
      write(ex, InboundResponses.error(ex.context, YarpcException.withCause(Code.INTERNAL,
          "internal error serving the request: " + YarpcException.describe(e), e), 0, writeAllocator), false);
    }
  }

  /** docs/spec/wire-http.md §3.2: method, metadata, validation and routing, TTL, then the handler by type. */
  private void serve(Exchange ex) {
    HttpRequest req = ex.head;
    ex.head = null;
    InboundResponses.Context rc = ex.context;
    if (isHealthCheck(req)) {
      releaseBody(ex);
      write(ex, healthResponse(rc.version(), HttpMethod.HEAD.equals(req.method())), false);
      return;
    }
    if (!HttpMethod.POST.equals(req.method())) {
      fail(ex, YarpcException.of(Code.NOT_FOUND, "request method was %s but only POST is allowed",
          req.method().name()));
      return;
    }
    HttpHeaders h = req.headers();
    String ttl = WireHeaders.get(h, WireHeaders.TTL_MS);
    RequestMeta.Builder mb = RequestMeta.builder()
        .caller(WireHeaders.get(h, WireHeaders.CALLER))
        .service(rc.service())
        .procedure(WireHeaders.get(h, WireHeaders.PROCEDURE))
        .encoding(rc.encoding())
        .transport(http2 ? TRANSPORT_HTTP2 : TRANSPORT_HTTP)
        .shardKey(WireHeaders.get(h, WireHeaders.SHARD_KEY))
        .routingKey(WireHeaders.get(h, WireHeaders.ROUTING_KEY))
        .routingDelegate(WireHeaders.get(h, WireHeaders.ROUTING_DELEGATE))
        .callerProcedure(WireHeaders.get(h, WireHeaders.CALLER_PROCEDURE))
        .headers(WireHeaders.applicationHeaders(h));
    YarpcException ttlError = null;
    if (!ttl.isEmpty()) {
      long ms = -1;
      try {
        ms = Long.parseLong(ttl);
      } catch (NumberFormatException ignored) {
        // reported below
      }
      if (ms < 0) {
        String shown = ms < 0 && isInteger(ttl) ? Long.toString(ms) : ttl;
        ttlError = YarpcException.of(Code.INVALID_ARGUMENT, "invalid TTL %s for service %s and procedure %s",
            GoStrings.quote(shown), GoStrings.quote(rc.service()), GoStrings.quote(WireHeaders.get(h, WireHeaders.PROCEDURE)));
      } else {
        mb.deadline(Deadline.after(Duration.ofMillis(ms)));
      }
    }
    RequestMeta meta = mb.build();

    Router router = state.router();
    HandlerSpec spec;
    try {
      if (router == null) {
        throw YarpcException.of(Code.UNAVAILABLE, "inbound has no router");
      }
      spec = router.choose(meta);
    } catch (RuntimeException e) {
      fail(ex, YarpcException.from(e));
      return;
    }
    if (ttlError != null) {
      fail(ex, ttlError);
      return;
    }
    if (meta.deadline() == null && spec.type() != io.yarpc.transport.RpcType.STREAMING) {
      fail(ex, YarpcException.of(Code.INVALID_ARGUMENT, "missing TTL")); // unary and oneway alike
      return;
    }
    ByteBuf buf = ex.body;
    ex.body = null;
    Body body = toBody(buf);
    Request request = Request.of(meta, body);
    switch (spec.type()) {
      case UNARY:
        serveUnary(ex, spec, request);
        break;
      case ONEWAY:
        serveOneway(ex, spec, request);
        break;
      default:
        body.release();
        fail(ex, YarpcException.of(Code.UNIMPLEMENTED, "transport http does not handle %s handlers", spec.type()));
    }
  }

  /** A {@code GET} or {@code HEAD} of exactly the health path (query ignored), when the check is on. */
  private boolean isHealthCheck(HttpRequest req) {
    String path = settings.healthPath();
    if (path == null || !(HttpMethod.GET.equals(req.method()) || HttpMethod.HEAD.equals(req.method()))) {
      return false;
    }
    String uri = req.uri();
    int query = uri.indexOf('?');
    return query < 0 ? uri.equals(path) : query == path.length() && uri.startsWith(path);
  }

  /** 200 {@code SERVING} or 503 {@code NOT_SERVING}, no {@code Rpc-*} headers; no body for {@code HEAD}. */
  private FullHttpResponse healthResponse(HttpVersion version, boolean head) {
    boolean serving = state.isServing();
    byte[] text = serving ? SERVING : NOT_SERVING;
    FullHttpResponse res = new DefaultFullHttpResponse(version,
        serving ? HttpResponseStatus.OK : HttpResponseStatus.SERVICE_UNAVAILABLE,
        head ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(text));
    res.headers()
        .set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8")
        .set(HttpHeaderNames.CONTENT_LENGTH, text.length)
        .set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_STORE);
    return res;
  }

  private void serveUnary(Exchange ex, HandlerSpec spec, Request request) {
    CompletableFuture<Response> future;
    try {
      future = spec.unary().handle(request);
    } catch (Throwable t) {
      request.body().release();
      future = CompletableFuture.failedFuture(t);
    }
    if (future == null) {
      future = CompletableFuture.failedFuture(new NullPointerException("handler returned no future"));
    }
    ex.future = future;
    future.whenComplete((response, error) -> completed(ex, response, error));
  }

  private void serveOneway(Exchange ex, HandlerSpec spec, Request request) {
    CompletableFuture<Void> future;
    try {
      future = spec.oneway().handle(request);
    } catch (Throwable t) {
      request.body().release();
      future = CompletableFuture.failedFuture(t);
    }
    YarpcException refused = refusal(future);
    if (refused != null) {
      fail(ex, refused);
      return;
    }
    if (future != null) {
      future.whenComplete((v, e) -> {
        if (e != null) {
          log.debug("oneway handler for {} failed: {}", request.meta(), e.toString());
        }
      });
    }
    write(ex, success(ex, Response.builder().build()), false);
  }

  /**
   * The error of a oneway call refused before its handler ran: the dispatcher answers a call it will not
   * run (it is stopping) with an already failed future carrying {@code unavailable}. Any other outcome,
   * including a handler that failed at once, is the handler's business: the call was accepted.
   */
  private static YarpcException refusal(CompletableFuture<Void> future) {
    if (future == null || !future.isCompletedExceptionally()) {
      return null;
    }
    try {
      future.join();
      return null;
    } catch (RuntimeException e) {
      YarpcException error = YarpcException.from(e);
      return error.code() == Code.UNAVAILABLE ? error : null;
    }
  }

  /** Called on whatever thread completed the handler: serialises there, then writes on the event loop. */
  private void completed(Exchange ex, Response response, Throwable error) {
    if (error != null && io.yarpc.internal.Futures.unwrap(error) instanceof CancellationException
        && !ctx.channel().isActive()) {
      // the client went away and we cancelled the call; nothing is written (a handler that cancelled its
      // own future on a live connection is answered below with cancelled, so answers stay in order)
      try {
        ctx.executor().execute(() -> finish(ex));
      } catch (RejectedExecutionException e) {
        finish(ex);
      }
      return;
    }
    FullHttpResponse res;
    if (error == null) {
      res = success(ex, response);
    } else {
      res = InboundResponses.error(ex.context, YarpcException.from(error), 0, writeAllocator);
    }
    try {
      ctx.executor().execute(() -> write(ex, res, false));
    } catch (RejectedExecutionException e) {
      res.release();
      finish(ex);
    }
  }

  private FullHttpResponse success(Exchange ex, Response response) {
    try {
      return InboundResponses.success(ex.context, response, writeAllocator);
    } catch (Exception e) {
      YarpcException failure = e instanceof YarpcException ? (YarpcException) e
          : YarpcException.withCause(Code.UNKNOWN, String.format("failed to write the response body: %s",
              YarpcException.describe(e)), e);
      return InboundResponses.error(ex.context, failure, 0, writeAllocator);
    }
  }

  private void fail(Exchange ex, YarpcException error) {
    releaseBody(ex);
    write(ex, InboundResponses.error(ex.context, error, 0, writeAllocator), false);
  }

  private static void releaseBody(Exchange ex) {
    if (ex.body != null) {
      ex.body.release();
      ex.body = null;
    }
  }

  /** Writes {@code res} for the current exchange (on the event loop), then moves on to the next one. */
  private void write(Exchange ex, FullHttpResponse res, boolean close) {
    if (!ctx.channel().isActive() || ex.finished.get()) {
      res.release();
      finish(ex);
      return;
    }
    boolean closeAfter = close || ex.closeAfter;
    if (!http2) {
      closeAfter |= !ex.keepAlive || closeAfterResponse || state.isDraining();
      if (closeAfter) {
        res.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        closing = true;
      } else if (res.protocolVersion().equals(HttpVersion.HTTP_1_0)) {
        HttpUtil.setKeepAlive(res, true);
      }
    }
    boolean closeConnection = closeAfter;
    boolean linger = close && !http2;
    ctx.writeAndFlush(res).addListener((ChannelFutureListener) f -> {
      if (closeConnection || !f.isSuccess()) {
        closing = true;
        if (linger && f.isSuccess()) {
          lingerThenClose();
        } else {
          ctx.close();
        }
      }
      finish(ex);
    });
  }

  /**
   * Closes an HTTP/1.1 connection whose client may still be sending (a rejected request): first only our
   * side (FIN), reading and discarding what still arrives for a while, so the client reads the answer
   * instead of losing it to a reset caused by unread data, as Go's server does.
   */
  private void lingerThenClose() {
    if (!(ctx.channel() instanceof SocketChannel)) {
      ctx.close();
      return;
    }
    ctx.channel().config().setAutoRead(true);
    ((SocketChannel) ctx.channel()).shutdownOutput().addListener(f -> {
      if (!f.isSuccess()) {
        ctx.close();
      } else {
        ctx.executor().schedule(() -> {
          ctx.close();
        }, LINGER_NANOS, TimeUnit.NANOSECONDS);
      }
    });
  }

  /** The exchange is over (answered, or abandoned): count it out and start the next one. */
  private void finish(Exchange ex) {
    if (!ex.finished.compareAndSet(false, true)) {
      return;
    }
    releaseBody(ex);
    state.exchangeFinished();
    if (current == ex) {
      current = null;
    }
    if (closing) {
      dropQueued();
      return;
    }
    Exchange next = queued.poll();
    if (next != null) {
      start(next);
    } else if (!http2) {
      ctx.channel().config().setAutoRead(true);
    }
  }

  private void dropQueued() {
    for (Exchange ex; (ex = queued.poll()) != null; ) {
      if (ex.early != null) {
        ex.early.release();
        ex.early = null;
      }
      ex.finished.set(true);
      releaseBody(ex);
      state.exchangeFinished();
    }
  }

  // ---------------------------------------------------------------------------------------------------
  // Connection events

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
    if (evt instanceof IdleStateEvent) {
      if (current == null && head == null && queued.isEmpty()) {
        closing = true;
        ctx.close();
      }
      return;
    }
    if (evt == InboundState.DRAIN) {
      if (!http2) {
        if (current == null && head == null && queued.isEmpty()) {
          closing = true;
          ctx.close();
        } else {
          closeAfterResponse = true;
        }
      }
      return;
    }
    ctx.fireUserEventTriggered(evt);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    closing = true;
    stopReadTimer();
    releaseReceived();
    head = null;
    Exchange ex = current;
    if (ex != null) {
      if (ex.future != null && !ex.future.isDone()) {
        ex.future.cancel(false); // the handler's call is cancelled; a late response is released by the core
      } else if (ex.future == null) {
        finish(ex);
      }
    }
    dropQueued();
    ctx.fireChannelInactive();
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    releaseReceived();
    dropQueued();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    log.debug("HTTP inbound connection {} failed: {}", ctx.channel(), cause.toString());
    closing = true;
    ctx.close();
  }

  // ---------------------------------------------------------------------------------------------------

  /** A body with byte access over the received buffers; releasing it releases them, once. */
  static Body toBody(ByteBuf buf) {
    if (buf == null || !buf.isReadable()) {
      if (buf != null) {
        buf.release();
      }
      return Body.empty();
    }
    return Body.ofBuffers(Arrays.asList(buf.nioBuffers()), buf::release);
  }

  private static boolean isInteger(String s) {
    try {
      Long.parseLong(s);
      return true;
    } catch (NumberFormatException e) {
      return false;
    }
  }

}
