package io.yarpc.transport.http.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http2.AbstractHttp2ConnectionHandlerBuilder;
import io.netty.handler.codec.http2.DefaultHttp2Connection;
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
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.concurrent.ScheduledFuture;
import io.yarpc.netty.internal.FrameCumulator;
import io.yarpc.transport.InboundLimits;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The h2c (and TLS {@code h2}) side of the HTTP inbound: one handler per connection, on Netty's {@link
 * Http2ConnectionHandler}, reading frames through its listener and keeping each request stream's state
 * ({@link Http2ServerStream}) in a property of the stream: no channel and no HTTP/1.1 objects per stream.
 *
 * <p><b>Limits</b> (from {@code InboundLimits}): {@code SETTINGS_MAX_HEADER_LIST_SIZE} ({@code
 * maxHeaderBytes}; Netty answers a block over it with 431), {@code SETTINGS_MAX_CONCURRENT_STREAMS} ({@code
 * maxConcurrentCallsPerConnection}), Netty's limits on the resets a client sends and provokes ({@code
 * maxRstFramesPerWindow}, then {@code GOAWAY(ENHANCE_YOUR_CALM)}) and its flood protections (queued control
 * frames, empty DATA frames, small CONTINUATION frames), stream windows sized from {@code
 * maxPendingBytesPerConnection} ({@link H2Tuning#serverStreamWindow}) with a connection window they cannot use
 * up ({@link H2Tuning#serverConnectionWindow}), the connection's {@link ConnectionBudget}, and an idle timer
 * that counts from the last open stream's end (PINGs do not keep a connection without calls open).
 *
 * <p><b>Going away.</b> Idle time, draining (bounded by the shutdown timeout) and maximum age (bounded by
 * its grace, or waiting for the streams when there is none) each close the connection gracefully: GOAWAY,
 * then the open streams finish. The client's first SETTINGS completes the handshake ({@link
 * ConnectionTimers}).
 *
 * <p><b>Writes.</b> An answer is written as HEADERS and DATA (the last one ending the stream) and flushed
 * once: at the end of the read that produced it, or by one flush task for all the answers that arrived from
 * handler threads meanwhile.
 *
 * <p>Event loop only.
 */
final class Http2ServerHandler extends Http2ConnectionHandler {
  private static final Logger log = LoggerFactory.getLogger(Http2ServerHandler.class);

  private final InboundState state;
  private final InboundSettings settings;
  private final ByteBufAllocator writeAllocator;
  private final WriteProgress progress;
  private final Http2Connection.PropertyKey key;
  private final int connectionWindow;
  private final List<Http2ServerStream> unflushed = new ArrayList<>();
  private final List<Http2ServerStream> headsRead = new ArrayList<>();
  private final Runnable flushTask = this::flushNow;
  private ChannelHandlerContext ctx;
  private ConnectionBudget budget;
  private CallServer calls;
  private boolean reading; // inside a read: its end flushes
  private boolean flushScheduled;
  private ScheduledFuture<?> idle; // at most one timer: rescheduled when it fires too early
  private long idleSince; // System.nanoTime() when the last open stream closed

  private Http2ServerHandler(
      Http2ConnectionDecoder decoder,
      Http2ConnectionEncoder encoder,
      Http2Settings initial,
      WriteProgress progress,
      InboundState state,
      InboundSettings settings,
      ByteBufAllocator writeAllocator,
      int connectionWindow) {
    super(decoder, encoder, initial);
    setCumulator(FrameCumulator.INSTANCE);
    this.progress = progress;
    this.state = state;
    this.settings = settings;
    this.writeAllocator = writeAllocator;
    this.connectionWindow = connectionWindow;
    this.key = connection().newKey();
    decoder.frameListener(new Frames());
    connection()
        .addListener(
            new Http2ConnectionAdapter() {
              @Override
              public void onStreamClosed(Http2Stream stream) {
                Http2ServerStream s = stream.getProperty(key);
                if (s != null) {
                  s.closed();
                }
                if (connection().numActiveStreams() == 0) {
                  becameIdle();
                }
              }
            });
  }

  /** The handler of a new connection of the inbound. */
  static Http2ServerHandler create(
      InboundState state, InboundSettings settings, ByteBufAllocator writeAllocator) {
    InboundLimits limits = settings.limits();
    int maxStreams = limits.maxConcurrentCallsPerConnection();
    int streamWindow =
        H2Tuning.serverStreamWindow(limits.maxPendingBytesPerConnection(), maxStreams);
    Http2Settings initial =
        H2Tuning.initialSettings()
            .initialWindowSize(streamWindow)
            .maxHeaderListSize(limits.maxHeaderBytes())
            .maxConcurrentStreams(maxStreams);
    int rstWindowSeconds =
        (int) Math.max(1, Math.min(Integer.MAX_VALUE, ceilSeconds(limits.rstFramesWindow())));
    DefaultHttp2Connection connection = new DefaultHttp2Connection(true);
    WriteProgress progress = H2Tuning.tuneServer(connection);
    return new Builder(
            state,
            settings,
            writeAllocator,
            progress,
            H2Tuning.serverConnectionWindow(streamWindow, maxStreams))
        .connection(connection)
        .initialSettings(initial)
        .decoderEnforceMaxRstFramesPerWindow(limits.maxRstFramesPerWindow(), rstWindowSeconds)
        .encoderEnforceMaxRstFramesPerWindow(limits.maxRstFramesPerWindow(), rstWindowSeconds)
        .gracefulShutdownTimeoutMillis(
            TimeUnit.NANOSECONDS.toMillis(settings.shutdownTimeoutNanos()))
        .build();
  }

  InboundState state() {
    return state;
  }

  InboundSettings settings() {
    return settings;
  }

  ChannelHandlerContext ctx() {
    return ctx;
  }

  ConnectionBudget budget() {
    return budget;
  }

  /** The connection's call server, which serves every stream's request (each with its own answers). */
  CallServer calls() {
    return calls;
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) throws Exception {
    this.ctx = ctx;
    this.budget =
        new ConnectionBudget(
            state.pending(), settings.limits().maxPendingBytesPerConnection(), ctx.executor());
    this.calls =
        new CallServer(
            state, settings.healthPath(), settings.deadlinePolicy(), writeAllocator, true);
    calls.attach(ctx);
    ctx.channel().closeFuture().addListener(f -> closedConnection());
    super.handlerAdded(ctx); // the preface and our SETTINGS
    Http2Connection c = connection();
    int now = c.local().flowController().initialWindowSize(c.connectionStream());
    if (connectionWindow > now) {
      c.local().flowController().incrementWindowSize(c.connectionStream(), connectionWindow - now);
    }
    becameIdle();
    ctx.flush();
  }

  private void closedConnection() {
    budget.close();
    if (idle != null) {
      idle.cancel(false);
      idle = null;
    }
  }

  /**
   * Writes {@code res} as the answer on {@code stream}: HEADERS, then DATA ending the stream; with {@code
   * withContent} false (the answer to a {@code HEAD}, RFC 9110 section 9.3.2) HEADERS alone, its
   * {@code content-length} kept and its content released.
   */
  ChannelFuture writeAnswer(Http2Stream stream, FullHttpResponse res, boolean withContent) {
    Http2Headers headers = Http2HeadersView.unwrap(res.headers());
    if (headers == null) {
      headers = HttpConversionUtil.toHttp2Headers(res.headers(), true);
    }
    headers.status(res.status().codeAsText());
    ByteBuf content = res.content();
    ChannelPromise promise = ctx.newPromise();
    Http2ConnectionEncoder encoder = encoder();
    if (withContent && content.isReadable()) {
      // no promise of its own: the DATA write's promise reports the answer (a failed HEADERS write
      // fails the stream, and so the DATA write); the void promise fires a failure down the
      // pipeline
      encoder.writeHeaders(ctx, stream.id(), headers, 0, false, ctx.voidPromise());
      encoder.writeData(ctx, stream.id(), content, 0, true, promise);
    } else {
      content.release();
      encoder.writeHeaders(ctx, stream.id(), headers, 0, true, promise);
    }
    flushSoon();
    return promise;
  }

  /** Resets {@code stream} with {@code code} (releasing what is queued for it). */
  void reset(Http2Stream stream, Http2Error code) {
    resetStream(ctx, stream.id(), code.code(), ctx.newPromise());
    flushSoon();
  }

  /** {@code n} bytes of {@code stream} were consumed: its credit goes back to the client. */
  void consumed(Http2Stream stream, int n) {
    try {
      if (decoder().flowController().consumeBytes(stream, n)) {
        flushSoon();
      }
    } catch (Http2Exception e) {
      onError(ctx, false, e);
    }
  }

  /** Bytes written so far for {@code stream} ({@link WriteWatch}'s mark). */
  long writtenBytes(Http2Stream stream) {
    return progress.counter(stream).written();
  }

  /** {@code s} wrote an answer not complete yet: it looks at it after the next flush. */
  void watchAfterFlush(Http2ServerStream s) {
    unflushed.add(s);
  }

  /** {@code s} read its request's head in this read: {@link Http2ServerStream#readComplete} at its end. */
  void afterRead(Http2ServerStream s) {
    headsRead.add(s);
  }

  private void flushSoon() {
    if (reading || flushScheduled) {
      return;
    }
    flushScheduled = true;
    ctx.executor().execute(flushTask);
  }

  private void flushNow() {
    flushScheduled = false;
    flush(ctx);
  }

  @Override
  public void flush(ChannelHandlerContext ctx) {
    super.flush(ctx);
    if (!unflushed.isEmpty()) {
      Http2ServerStream[] streams = unflushed.toArray(new Http2ServerStream[0]);
      unflushed.clear();
      for (Http2ServerStream s : streams) {
        s.flushed();
      }
    }
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
    reading = true;
    super.channelRead(ctx, msg);
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
    reading = false;
    if (!headsRead.isEmpty()) {
      Http2ServerStream[] streams = headsRead.toArray(new Http2ServerStream[0]);
      headsRead.clear();
      for (Http2ServerStream s : streams) {
        s.readComplete();
      }
    }
    super.channelReadComplete(ctx); // flushes
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    reading = false;
    headsRead.clear();
    super.channelInactive(ctx); // closes the streams: each releases what it holds
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) throws Exception {
    log.debug("HTTP/2 connection {} failed: {}", ctx.channel(), cause.toString());
    if (ServerInitializer.isHttp2Error(cause)) {
      super.exceptionCaught(ctx, cause); // GOAWAY or RST_STREAM with the error's code
    } else {
      ctx.close();
    }
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
    if (evt instanceof IdleStateEvent) {
      return;
    }
    if (evt == InboundState.DRAIN) {
      ctx.channel().close(); // GOAWAY, then close once the open streams are done (bounded)
      return;
    }
    if (evt == InboundState.MAX_AGE) {
      java.time.Duration grace = settings.limits().maxConnectionAgeGrace();
      gracefulShutdownTimeoutMillis(grace == null ? -1 : grace.toMillis());
      ctx.channel().close(); // GOAWAY, then close once the open streams are done
      return;
    }
    super.userEventTriggered(ctx, evt);
  }

  /** No stream is open any more: the idle time counts from now (one timer, not one per call). */
  private void becameIdle() {
    idleSince = System.nanoTime();
    if (idle == null && ctx != null && ctx.channel().isOpen()) {
      schedule(settings.idleTimeoutNanos());
    }
  }

  private void schedule(long delayNanos) {
    idle = ctx.executor().schedule(this::idleTimerFired, delayNanos, TimeUnit.NANOSECONDS);
  }

  private void idleTimerFired() {
    idle = null;
    if (connection().numActiveStreams() > 0 || !ctx.channel().isOpen()) {
      return; // busy: the next time it becomes idle starts the timer again
    }
    long left = settings.idleTimeoutNanos() - (System.nanoTime() - idleSince);
    if (left > 0) {
      schedule(left); // it was busy in between
    } else {
      ctx.channel().close(); // through this handler: sends GOAWAY
    }
  }

  private static long ceilSeconds(java.time.Duration d) {
    long s = d.getSeconds();
    return d.getNano() > 0 ? s + 1 : s;
  }

  /** The frames of the connection, read by Netty's decoder. */
  private final class Frames extends Http2FrameAdapter {
    @Override
    public void onHeadersRead(
        ChannelHandlerContext ctx,
        int streamId,
        Http2Headers headers,
        int padding,
        boolean endOfStream)
        throws Http2Exception {
      Http2Stream stream = connection().stream(streamId);
      if (stream == null) {
        return;
      }
      Http2ServerStream s = stream.getProperty(key);
      if (s == null) {
        s = new Http2ServerStream(Http2ServerHandler.this, stream);
        stream.setProperty(key, s);
      }
      s.headers(headers, endOfStream);
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
        boolean endOfStream)
        throws Http2Exception {
      onHeadersRead(ctx, streamId, headers, padding, endOfStream);
    }

    @Override
    public int onDataRead(
        ChannelHandlerContext ctx, int streamId, ByteBuf data, int padding, boolean endOfStream) {
      Http2Stream stream = connection().stream(streamId);
      Http2ServerStream s = stream == null ? null : stream.getProperty(key);
      if (s == null) {
        return data.readableBytes() + padding;
      }
      return s.data(data, padding, endOfStream);
    }

    @Override
    public void onSettingsRead(ChannelHandlerContext ctx, Http2Settings settings) {
      ConnectionTimers.handshakeDone(ctx.channel());
    }
  }

  /** Netty's builder, making this handler. */
  private static final class Builder
      extends AbstractHttp2ConnectionHandlerBuilder<Http2ServerHandler, Builder> {
    private final InboundState state;
    private final InboundSettings settings;
    private final ByteBufAllocator writeAllocator;
    private final WriteProgress progress;
    private final int connectionWindow;

    Builder(
        InboundState state,
        InboundSettings settings,
        ByteBufAllocator writeAllocator,
        WriteProgress progress,
        int connectionWindow) {
      this.state = state;
      this.settings = settings;
      this.writeAllocator = writeAllocator;
      this.progress = progress;
      this.connectionWindow = connectionWindow;
    }

    @Override
    protected Builder connection(Http2Connection connection) {
      return super.connection(connection);
    }

    @Override
    protected Builder initialSettings(Http2Settings settings) {
      return super.initialSettings(settings);
    }

    @Override
    protected Builder decoderEnforceMaxRstFramesPerWindow(int max, int seconds) {
      return super.decoderEnforceMaxRstFramesPerWindow(max, seconds);
    }

    @Override
    protected Builder encoderEnforceMaxRstFramesPerWindow(int max, int seconds) {
      return super.encoderEnforceMaxRstFramesPerWindow(max, seconds);
    }

    @Override
    protected Builder gracefulShutdownTimeoutMillis(long millis) {
      return super.gracefulShutdownTimeoutMillis(millis);
    }

    @Override
    protected Http2ServerHandler build() {
      return super.build();
    }

    @Override
    protected Http2ServerHandler build(
        Http2ConnectionDecoder decoder, Http2ConnectionEncoder encoder, Http2Settings initial) {
      return new Http2ServerHandler(
          decoder, encoder, initial, progress, state, settings, writeAllocator, connectionWindow);
    }
  }
}
