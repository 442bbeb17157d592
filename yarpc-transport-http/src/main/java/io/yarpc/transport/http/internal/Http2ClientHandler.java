package io.yarpc.transport.http.internal;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http2.AbstractHttp2ConnectionHandlerBuilder;
import io.netty.handler.codec.http2.Http2CodecUtil;
import io.netty.handler.codec.http2.Http2Connection;
import io.netty.handler.codec.http2.Http2ConnectionAdapter;
import io.netty.handler.codec.http2.Http2ConnectionDecoder;
import io.netty.handler.codec.http2.Http2ConnectionEncoder;
import io.netty.handler.codec.http2.Http2ConnectionHandler;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2Exception;
import io.netty.handler.codec.http2.Http2FrameAdapter;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.Http2Stream;
import io.netty.handler.codec.http2.HttpConversionUtil;
import io.netty.handler.codec.http2.StreamBufferingEncoder;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.collection.IntObjectHashMap;
import io.netty.util.concurrent.Future;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.netty.internal.FrameCumulator;
import io.yarpc.netty.internal.IoErrors;
import io.yarpc.netty.internal.KeepAliveHandler;
import java.nio.channels.ClosedChannelException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The client end of one h2c (or h2) connection of an {@link HttpPeer}, driven directly on Netty's {@link
 * Http2ConnectionHandler} as grpc-netty's client handler is: one handler per connection with a frame
 * listener, the state of each call in its stream's {@link Http2Connection.PropertyKey} ({@link
 * Http2ClientStream}), no child channel and no HTTP/1-style codec per call.
 *
 * <ul>
 *   <li><b>Sending.</b> {@link #send} writes a call's HEADERS and DATA (END_STREAM on the last frame) and
 *       flushes once. A stream over the server's {@code SETTINGS_MAX_CONCURRENT_STREAMS} waits in Netty's
 *       {@link StreamBufferingEncoder} for a free slot.
 *   <li><b>Flow control</b> ({@link H2Tuning}): the connection announces a {@value H2Tuning#STREAM_WINDOW}
 *       byte stream window in its first SETTINGS and raises the connection window to {@value
 *       H2Tuning#CONNECTION_WINDOW} bytes in the same flush, before the server's SETTINGS arrive, as gRPC
 *       clients do. Received DATA is copied out of the read buffer at once ({@link ReceivedContent}), so its
 *       window is returned as it is read; the WINDOW_UPDATEs go out with the flush after the read.
 *   <li><b>Receiving.</b> The response's HEADERS, DATA and optional trailers settle the call ({@link
 *       ClientCall}); the response body limit is checked on the declared {@code content-length} and as DATA
 *       arrives. A call that is cancelled, fails or gets too large a response resets its stream ({@code
 *       CANCEL}).
 *   <li><b>Retries.</b> A stream the server refused ({@code REFUSED_STREAM}), one above the last stream of a
 *       GOAWAY, and one that never left the buffering encoder were provably not processed: the call is sent
 *       again on the peer's (possibly new) connection while it has attempts left, else fails {@linkplain
 *       YarpcException#unprocessed() unprocessed}.
 * </ul>
 *
 * <p>The connection is {@linkplain #ready() ready} once the server's first SETTINGS arrived; after a GOAWAY
 * or once closed it is {@linkplain #goingAway() going away} and the peer opens another. A server that
 * sends no SETTINGS within the connect timeout of the connection becoming active (after TCP, and TLS
 * when there is TLS) is not an HTTP/2 server, or a stuck one: the connection fails with a readable
 * reason and closes, as grpc-go's client gives up on a server preface that does not arrive.
 *
 * <p>Confined to the channel's event loop, except {@link #send}, {@link #ready()}, {@link #goingAway()} and a call's
 * cancellation, which may be called from any thread.
 */
final class Http2ClientHandler extends Http2ConnectionHandler {
  /**
   * The most the whole-message arrays ({@link ReceivedContent}) of the responses being received on one
   * connection may add up to: 16 MiB. Each counts its declared length from the response's headers, so a
   * server that declares large bodies and sends little of them cannot make the client hold more; past
   * it, responses are received into pieces of what actually arrives.
   */
  static final long MAX_WHOLE_BYTES = 16L << 20;

  private final HttpPeer peer;
  private final String scheme;
  private final Http2Connection.PropertyKey streamKey;
  private final CompletableFuture<Channel> ready = new CompletableFuture<>();
  private final long settingsTimeoutMillis;
  private ScheduledFuture<?> settingsTimer;
  // streams whose HEADERS were written but that Netty has not created yet (over the server's limit)
  private final IntObjectHashMap<Http2ClientStream> unopened = new IntObjectHashMap<>();
  private volatile boolean goingAway;
  private ChannelHandlerContext ctx;
  private boolean activated;
  private long wholeBytes; // the whole-message arrays of responses being received (ReceivedContent)
  private Throwable failure; // why the connection failed, for the calls it ends

  private Http2ClientHandler(
      Http2ConnectionDecoder decoder,
      Http2ConnectionEncoder encoder,
      Http2Settings settings,
      HttpPeer peer,
      long settingsTimeoutMillis) {
    super(decoder, encoder, settings);
    setCumulator(FrameCumulator.INSTANCE);
    this.peer = peer;
    this.settingsTimeoutMillis = settingsTimeoutMillis;
    this.scheme = peer.isTls() ? "https" : "http";
    this.streamKey = connection().newKey();
    decoder.frameListener(new Listener());
    connection()
        .addListener(
            new Http2ConnectionAdapter() {
              @Override
              public void onStreamAdded(Http2Stream stream) {
                Http2ClientStream s = unopened.remove(stream.id());
                if (s != null) {
                  stream.setProperty(streamKey, s);
                }
              }

              @Override
              public void onStreamClosed(Http2Stream stream) {
                streamClosed(stream.getProperty(streamKey));
              }

              @Override
              public void onGoAwayReceived(int lastStreamId, long errorCode, ByteBuf debugData) {
                goAwayReceived(lastStreamId);
              }
            });
  }

  /**
   * A handler for a connection of {@code peer} that accepts response header blocks of up to {@code
   * maxResponseHeaderSize} bytes and waits up to {@code settingsTimeoutMillis} for the server's first
   * SETTINGS once the connection is active.
   */
  static Http2ClientHandler create(
      HttpPeer peer, int maxResponseHeaderSize, long settingsTimeoutMillis) {
    return new Builder(peer, maxResponseHeaderSize, settingsTimeoutMillis).build();
  }

  /** Completes with the channel once the server's first SETTINGS arrived; fails if it closes first. */
  CompletableFuture<Channel> ready() {
    return ready;
  }

  /** After a GOAWAY or once closed: new calls need another connection. */
  boolean goingAway() {
    return goingAway;
  }

  /** Whether the connection carries calls now, or is being opened for one (for keepalive). */
  boolean hasCalls() {
    return !ready.isDone() || connection().numActiveStreams() > 0 || !unopened.isEmpty();
  }

  /** Sends a PING carrying {@code payload} (event loop). */
  void ping(long payload) {
    encoder().writePing(ctx, false, payload, ctx.newPromise());
    flush(ctx);
  }

  // ---------------------------------------------------------------------------------------------------
  // Connection life

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) throws Exception {
    this.ctx = ctx;
    super.handlerAdded(ctx); // sends the preface and SETTINGS when the channel is active
    if (ctx.channel().isActive()) {
      active();
    }
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) throws Exception {
    super.channelActive(ctx); // sends the preface and SETTINGS
    active();
  }

  /**
   * Once the connection is active (the preface and SETTINGS sent): the wait for the server's SETTINGS
   * starts, and the connection WINDOW_UPDATE is flushed with the preface and SETTINGS.
   */
  private void active() throws Http2Exception {
    if (activated) {
      return;
    }
    activated = true;
    settingsTimer =
        ctx.executor().schedule(this::noSettings, settingsTimeoutMillis, TimeUnit.MILLISECONDS);
    Http2Stream connectionStream = connection().connectionStream();
    int now = connection().local().flowController().initialWindowSize(connectionStream);
    if (H2Tuning.CONNECTION_WINDOW > now) {
      connection()
          .local()
          .flowController()
          .incrementWindowSize(connectionStream, H2Tuning.CONNECTION_WINDOW - now);
    }
    ctx.flush();
  }

  /** The server's SETTINGS did not arrive in time: the connection fails and closes (event loop). */
  private void noSettings() {
    if (ready.isDone() || !ctx.channel().isOpen()) {
      return;
    }
    if (failure == null) {
      failure =
          YarpcException.of(
              Code.UNAVAILABLE,
              "peer %s sent no HTTP/2 SETTINGS within %d ms of the connection opening; is it an"
                  + " HTTP/2 server?",
              peer.identifier(),
              settingsTimeoutMillis);
    }
    goingAway = true;
    ready.completeExceptionally(failure);
    ctx.close();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    goingAway = true;
    if (settingsTimer != null) {
      settingsTimer.cancel(false);
    }
    String why = KeepAliveHandler.failure(ctx.channel());
    ready.completeExceptionally(
        why != null
            ? YarpcException.of(
                Code.UNAVAILABLE, "connection to peer %s closed: %s", peer.identifier(), why)
            : failure != null ? failure : new ClosedChannelException());
    super.channelInactive(ctx); // closes the streams: their calls end (streamClosed)
    for (Http2ClientStream s : unopened.values()) {
      attemptEnded(s, null); // normally failed by the buffering encoder already
    }
    unopened.clear();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) throws Exception {
    if (Http2CodecUtil.getEmbeddedHttp2Exception(cause) != null) {
      super.exceptionCaught(
          ctx, cause); // stream or connection error: onStreamError/onConnectionError
      return;
    }
    if (failure == null) {
      failure = cause; // an I/O or TLS failure: the calls it ends name it
    }
    ready.completeExceptionally(cause);
    ctx.close(); // from here towards the socket: no graceful GOAWAY on a broken connection
  }

  @Override
  protected void onConnectionError(
      ChannelHandlerContext ctx, boolean outbound, Throwable cause, Http2Exception http2Ex) {
    if (failure == null) {
      failure = cause;
    }
    goingAway = true;
    ready.completeExceptionally(cause);
    super.onConnectionError(ctx, outbound, cause, http2Ex);
  }

  @Override
  protected void onStreamError(
      ChannelHandlerContext ctx,
      boolean outbound,
      Throwable cause,
      Http2Exception.StreamException http2Ex) {
    Http2Stream stream = connection().stream(http2Ex.streamId());
    Http2ClientStream s = stream == null ? null : stream.getProperty(streamKey);
    if (s != null && s.failure == null) {
      s.failure = cause; // the stream is reset and closed next: its call names the cause
    }
    super.onStreamError(ctx, outbound, cause, http2Ex);
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
    if (evt instanceof IdleStateEvent) {
      if (!hasCalls()) {
        ctx.channel().close(); // graceful: GOAWAY, and no stream to wait for
      }
      return;
    }
    super.userEventTriggered(ctx, evt);
  }

  private void goAwayReceived(int lastStreamId) {
    goingAway = true; // new calls open a new connection
    try {
      connection()
          .forEachActiveStream(
              stream -> {
                Http2ClientStream s = stream.getProperty(streamKey);
                if (s != null && stream.id() > lastStreamId) {
                  s.notProcessed = true; // Netty closes it next: never processed
                }
                return true;
              });
    } catch (Http2Exception e) {
      throw new IllegalStateException(e); // the visitor throws nothing
    }
  }

  // ---------------------------------------------------------------------------------------------------
  // Calls

  /**
   * Sends {@code call} on a new stream of this connection (from any thread); a connection that cannot carry
   * it any more hands it back to the peer, which sends it on another.
   */
  void send(ClientCall call) {
    Channel ch = ctx.channel();
    if (ch.eventLoop().inEventLoop()) {
      start(call);
      return;
    }
    try {
      ch.eventLoop().execute(() -> start(call));
    } catch (RejectedExecutionException e) {
      call.failUnprocessed(peer.connectionFailure(e)); // the event loop stopped: nothing was sent
    }
  }

  private void start(ClientCall call) {
    FullHttpRequest request = call.attempt();
    if (request == null) {
      return; // settled (cancelled) meanwhile
    }
    int id = -1;
    if (ctx.channel().isActive() && !goingAway && !connection().goAwayReceived()) {
      id = connection().local().incrementAndGetNextStreamId();
    }
    if (id < 0) { // closed, going away, or out of stream ids: nothing was sent
      request.release();
      goingAway = true;
      if (call.mayRetry()) {
        peer.sendH2(call);
      } else {
        call.failUnprocessed(peer.connectionFailure(failure));
      }
      return;
    }
    Http2ClientStream s = new Http2ClientStream(call, id);
    request.headers().set(HttpConversionUtil.ExtensionHeaderNames.SCHEME.text(), scheme);
    Http2Headers headers = HttpConversionUtil.toHttp2Headers(request, false);
    ByteBuf body = request.content();
    boolean hasBody = body.isReadable();
    s.writesPending = hasBody ? 2 : 1;
    unopened.put(id, s); // until Netty creates the stream (onStreamAdded)
    encoder().writeHeaders(ctx, id, headers, 0, !hasBody, written(s));
    if (hasBody) {
      encoder().writeData(ctx, id, body, 0, true, written(s));
    } else {
      body.release();
    }
    flush(ctx);
    call.attach(() -> cancelLater(s));
  }

  /** A promise for one of the request's writes; the last one's outcome may end the attempt. */
  private ChannelPromise written(Http2ClientStream s) {
    ChannelPromise p = ctx.newPromise();
    p.addListener((Future<? super Void> f) -> writeDone(s, f));
    return p;
  }

  private void writeDone(Http2ClientStream s, Future<?> f) {
    if (!f.isSuccess() && s.writeFailure == null) {
      s.writeFailure = f.cause();
    }
    if (--s.writesPending > 0) {
      return;
    }
    if (unopened.remove(s.id) != null) {
      s.notProcessed = true; // never created, so never sent (GOAWAY or close while it waited)
    }
    if (s.writeFailure != null) {
      attemptEnded(s, s.writeFailure);
    } else if (s.closedWhileWriting) {
      attemptEnded(s, null);
    }
  }

  private void streamClosed(Http2ClientStream s) {
    if (s == null || s.ended) {
      return;
    }
    if (s.writesPending > 0) {
      s.closedWhileWriting = true; // the writes fail next, and their outcome ends the attempt
      return;
    }
    attemptEnded(s, null);
  }

  /** The call was cancelled (any thread): reset its stream. */
  private void cancelLater(Http2ClientStream s) {
    try {
      ctx.executor().execute(() -> abort(s, null));
    } catch (RejectedExecutionException e) {
      // the event loop stopped: the connection is gone, and the stream with it
    }
  }

  /** Ends the attempt with {@code error} (null: the call was settled elsewhere) and resets the stream. */
  private void abort(Http2ClientStream s, YarpcException error) {
    if (s.ended) {
      return;
    }
    s.ended = true;
    releaseContent(s);
    if (error != null) {
      s.call.fail(error);
    }
    reset(s);
  }

  /** Releases the response body {@code s} received so far, if any. */
  private void releaseContent(Http2ClientStream s) {
    if (s.content != null) {
      wholeBytes -= s.content.wholeLength();
    }
    s.releaseContent();
  }

  private void reset(Http2ClientStream s) {
    Http2Stream stream = connection().stream(s.id);
    if (stream != null || unopened.containsKey(s.id)) { // the buffering encoder drops a waiting one
      encoder().writeRstStream(ctx, s.id, Http2Error.CANCEL.code(), ctx.newPromise());
      flush(ctx);
    }
  }

  /** The attempt ended without a response: send it again if that is safe, else fail the call. */
  private void attemptEnded(Http2ClientStream s, Throwable cause) {
    if (s.ended) {
      return;
    }
    s.ended = true;
    releaseContent(s);
    ClientCall call = s.call;
    if (call.isSettled()) {
      return;
    }
    if (cause == null) {
      cause = s.failure != null ? s.failure : failure;
    }
    if (!s.received && cause instanceof Http2Exception.HeaderListSizeException) {
      call.fail(
          YarpcException.withCause(
              Code.INVALID_ARGUMENT,
              "request headers are larger than peer "
                  + peer.identifier()
                  + " accepts: "
                  + IoErrors.describe(cause),
              cause));
      return;
    }
    boolean safeToRetry = !s.received && s.notProcessed;
    // a refused stream is sent again once (its refusal may have raced a SETTINGS change); a server
    // that refuses again is at a limit or stopping, and retrying it is the caller's policy
    if (safeToRetry && (!s.refused || call.firstRefusal()) && call.mayRetry()) {
      peer.sendH2(call);
      return;
    }
    String keepAliveFailure = KeepAliveHandler.failure(ctx.channel());
    YarpcException error;
    if (keepAliveFailure != null) {
      error =
          YarpcException.of(
              Code.UNAVAILABLE,
              "connection to peer %s closed: %s",
              peer.identifier(),
              keepAliveFailure);
    } else if (cause != null) {
      error = peer.connectionFailure(cause);
    } else if (s.resetCode >= 0) {
      Http2Error code = Http2Error.valueOf(s.resetCode);
      error =
          YarpcException.of(
              Code.UNAVAILABLE,
              "peer %s reset the stream (%s) before the response was complete",
              peer.identifier(),
              code == null ? "error code " + s.resetCode : code.name());
    } else {
      error =
          YarpcException.of(
              Code.UNAVAILABLE,
              "connection to peer %s closed before the response was complete",
              peer.identifier());
    }
    call.fail(safeToRetry ? error.withUnprocessed() : error);
  }

  private Http2ClientStream stream(int id) {
    Http2Stream stream = connection().stream(id);
    Http2ClientStream s = stream == null ? null : stream.getProperty(streamKey);
    return s == null || s.ended ? null : s;
  }

  private void headersRead(int streamId, Http2Headers headers, boolean endStream) {
    Http2ClientStream s = stream(streamId);
    if (s == null) {
      return;
    }
    if (s.headers
        == null) { // the response's head; later blocks are trailers, which YARPC does not use
      int status;
      try {
        status = HttpConversionUtil.parseStatus(headers.status()).code();
      } catch (Http2Exception e) {
        s.received = true;
        abort(
            s,
            YarpcException.of(
                Code.UNKNOWN,
                "malformed HTTP response from peer %s: %s",
                peer.identifier(),
                IoErrors.describe(e)));
        return;
      }
      if (status >= 100 && status < 200) {
        return; // 100 Continue and the like
      }
      s.received = true;
      HttpHeaders h = new Http2HeadersView(headers); // the decoded block, not copied
      long declared = contentLength(h);
      if (declared > s.call.maxResponseBodySize()) {
        tooLarge(s);
        return;
      }
      s.status = status;
      s.headers = h;
      // a body with a content-length of more than a piece goes into one array made for it, which
      // counts in full at once: only while this connection's such arrays stay within their cap
      s.content =
          new ReceivedContent(
              ctx.alloc(), true, declared, wholeBytes + declared <= MAX_WHOLE_BYTES);
      wholeBytes += s.content.wholeLength();
    }
    if (endStream) {
      complete(s);
    }
  }

  private static long contentLength(HttpHeaders h) {
    String value = h.get("content-length");
    if (value == null) {
      return -1;
    }
    try {
      return Long.parseLong(value.trim());
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  private void dataRead(int streamId, ByteBuf data, boolean endStream) {
    Http2ClientStream s = stream(streamId);
    if (s == null) {
      return;
    }
    s.received = true;
    if (s.content == null) {
      abort(
          s,
          YarpcException.of(
              Code.UNKNOWN,
              "malformed HTTP response from peer %s: DATA before the response headers",
              peer.identifier()));
      return;
    }
    if (s.content.size() + data.readableBytes() > s.call.maxResponseBodySize()) {
      tooLarge(s);
      return;
    }
    s.content.copy(data);
    if (endStream) {
      complete(s);
    }
  }

  private void tooLarge(Http2ClientStream s) {
    abort(
        s,
        YarpcException.of(
            Code.RESOURCE_EXHAUSTED,
            "response body from peer %s is larger than the limit of %d bytes",
            peer.identifier(),
            s.call.maxResponseBodySize()));
  }

  private void complete(Http2ClientStream s) {
    s.ended = true;
    wholeBytes -= s.content.wholeLength(); // handed on: the caller's now
    ClientResponse response = new ClientResponse(s.status, s.headers, s.content.take());
    s.content = null;
    Http2Stream stream = connection().stream(s.id);
    if (stream != null && stream.state().localSideOpen()) {
      reset(s); // answered before the request was all sent: the server reads no more of it
    }
    if (!s.call.settle()) { // cancelled meanwhile: nobody takes the response
      response.content().release();
      return;
    }
    peer.callSucceeded();
    s.call.deliver(response);
  }

  /** The frames of the connection, as Netty's decoder reads them. */
  private final class Listener extends Http2FrameAdapter {
    @Override
    public void onSettingsRead(ChannelHandlerContext ctx, Http2Settings settings) {
      if (settingsTimer != null) {
        settingsTimer.cancel(false);
      }
      ready.complete(ctx.channel());
    }

    @Override
    public void onHeadersRead(
        ChannelHandlerContext ctx,
        int streamId,
        Http2Headers headers,
        int padding,
        boolean endStream) {
      headersRead(streamId, headers, endStream);
    }

    @Override
    public void onHeadersRead(
        ChannelHandlerContext ctx,
        int streamId,
        Http2Headers headers,
        int streamDependency,
        short weight,
        boolean exclusive,
        int padding,
        boolean endStream) {
      headersRead(streamId, headers, endStream);
    }

    @Override
    public int onDataRead(
        ChannelHandlerContext ctx, int streamId, ByteBuf data, int padding, boolean endOfStream) {
      int consumed = data.readableBytes() + padding;
      dataRead(streamId, data, endOfStream);
      return consumed; // copied out (or dropped): its window goes back at once
    }

    @Override
    public void onRstStreamRead(ChannelHandlerContext ctx, int streamId, long errorCode) {
      Http2ClientStream s = stream(streamId);
      if (s == null) {
        return;
      }
      s.resetCode = errorCode;
      if (errorCode == Http2Error.REFUSED_STREAM.code()) {
        s.notProcessed = true; // the server did not process the stream: safe to send again
        s.refused = true;
      }
    }
  }

  /** Netty's builder with the connection of {@link H2Tuning} and the client's settings. */
  private static final class Builder
      extends AbstractHttp2ConnectionHandlerBuilder<Http2ClientHandler, Builder> {
    private final HttpPeer peer;
    private final long settingsTimeoutMillis;

    Builder(HttpPeer peer, int maxResponseHeaderSize, long settingsTimeoutMillis) {
      this.peer = peer;
      this.settingsTimeoutMillis = settingsTimeoutMillis;
      connection(H2Tuning.clientConnection());
      initialSettings(H2Tuning.initialSettings().maxHeaderListSize(maxResponseHeaderSize));
      encoderEnforceMaxConcurrentStreams(true); // streams over the server's limit wait for a slot
    }

    @Override
    public Http2ClientHandler build() {
      return super.build();
    }

    @Override
    protected Http2ClientHandler build(
        Http2ConnectionDecoder decoder, Http2ConnectionEncoder encoder, Http2Settings settings) {
      return new Http2ClientHandler(decoder, encoder, settings, peer, settingsTimeoutMillis);
    }
  }
}
