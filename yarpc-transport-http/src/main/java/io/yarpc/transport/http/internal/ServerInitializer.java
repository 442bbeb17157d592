package io.yarpc.transport.http.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http2.Http2ConnectionAdapter;
import io.netty.handler.codec.http2.Http2Exception;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.Http2SettingsFrame;
import io.netty.handler.codec.http2.Http2Stream;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamChannelOption;
import io.netty.handler.codec.http2.Http2StreamFrameToHttpObjectCodec;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.ScheduledFuture;
import io.yarpc.netty.internal.ServerTls;
import io.yarpc.transport.InboundLimits;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Sets up each accepted connection: refuses it when the inbound has {@code InboundLimits.maxConnections}
 * open already (closed before anything is read, and counted), starts its timers ({@link
 * ConnectionTimers}: handshake, maximum age), an idle timer, then the inbound's TLS front ({@link
 * ServerTls}: nothing when TLS is off), then a detector that looks at the first bytes and installs either
 * the HTTP/1.1 pipeline ({@code HttpServerCodec} + {@link ServerRequestHandler}) or, when they are the
 * HTTP/2 connection preface and h2c is enabled, the HTTP/2 pipeline (frame codec + multiplexer with an
 * {@link Http2StreamFlow} and a {@link ServerRequestHandler} per stream). Over TLS, ALPN chooses the
 * pipeline ({@code h2} or {@code http/1.1}; the detector when the client used no ALPN); a plaintext client
 * of an enforced port gets {@link PlaintextRefusal}'s answer.
 *
 * <p>The limits each pipeline applies: HTTP/1.1 request line ({@code maxRequestLineLength}), header block
 * ({@code maxHeaderBytes}) and header count ({@link CountedHeaders}) in the decoder; HTTP/2 {@code
 * SETTINGS_MAX_HEADER_LIST_SIZE} ({@code maxHeaderBytes}), {@code SETTINGS_MAX_CONCURRENT_STREAMS} ({@code
 * maxConcurrentCallsPerConnection}), Netty's limits on the resets a client sends and provokes ({@code
 * maxRstFramesPerWindow}, then {@code GOAWAY(ENHANCE_YOUR_CALM)}), stream windows sized from {@code
 * maxPendingBytesPerConnection} ({@link H2Tuning#serverStreamWindow}) and a connection window that they
 * cannot use up ({@link H2Tuning#serverConnectionWindow}), and an idle timer that counts from
 * the last open stream's end (PINGs do not keep a connection without calls open).
 */
public final class ServerInitializer extends ChannelInitializer<SocketChannel> {
  private static final org.slf4j.Logger log =
      org.slf4j.LoggerFactory.getLogger(ServerInitializer.class);
  private static final byte[] PREFACE =
      "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

  private final InboundState state;
  private final InboundSettings settings;
  private final InboundLimits limits;
  private final ByteBufAllocator writeAllocator;
  private final ServerTls tls;

  /**
   * The initializer of an inbound's connections; {@code tls} is the inbound's TLS front (which passes
   * every connection on as plaintext when TLS is off).
   */
  public ServerInitializer(
      InboundState state,
      InboundSettings settings,
      ByteBufAllocator writeAllocator,
      ServerTls tls) {
    this.state = state;
    this.settings = settings;
    this.limits = settings.limits();
    this.writeAllocator = writeAllocator;
    this.tls = tls;
  }

  @Override
  protected void initChannel(SocketChannel ch) {
    if (!state.admit(ch)) {
      log.debug("HTTP inbound: {} connections open; refusing {}", limits.maxConnections(), ch);
      ch.config().setAutoRead(false);
      ch.close();
      return;
    }
    ConnectionTimers.start(ch, limits);
    ch.pipeline()
        .addLast(
            "idle", new IdleStateHandler(0, 0, settings.idleTimeoutNanos(), TimeUnit.NANOSECONDS));
    tls.install(ch.pipeline(), new AfterTls());
  }

  /** What follows the TLS front: the protocol the connection speaks, or the refusal of plaintext. */
  private final class AfterTls implements ServerTls.Continuation {
    @Override
    public void plaintext(ChannelPipeline p) {
      p.addLast("detect", new ProtocolDetector());
    }

    @Override
    public void tls(ChannelPipeline p, SslHandler ssl) {
      String alpn = ssl.applicationProtocol();
      if (ApplicationProtocolNames.HTTP_2.equals(alpn) && settings.http2()) {
        configureHttp2(p);
      } else if (ApplicationProtocolNames.HTTP_1_1.equals(alpn)) {
        configureHttp1(p);
      } else {
        // no ALPN: HTTP/1.1, or HTTP/2 with prior knowledge, told apart as over plaintext
        p.addLast("detect", new ProtocolDetector());
      }
    }

    @Override
    public void refusePlaintext(ChannelHandlerContext ctx, ByteBuf firstBytes) {
      ctx.write(
          settings.http2() && startsLikePreface(firstBytes)
              ? PlaintextRefusal.http2(ctx.alloc())
              : PlaintextRefusal.http1(ctx.alloc()));
    }
  }

  /** Whether {@code in} holds at least 4 bytes and they begin the HTTP/2 connection preface. */
  private static boolean startsLikePreface(ByteBuf in) {
    int n = Math.min(in.readableBytes(), PREFACE.length);
    if (n < 4) {
      return false; // "P", "PR" and "PRI" could still become an HTTP/1.1 method
    }
    for (int i = 0; i < n; i++) {
      if (in.getByte(in.readerIndex() + i) != PREFACE[i]) {
        return false;
      }
    }
    return true;
  }

  private void configureHttp1(ChannelPipeline p) {
    ServerRequestHandler handler = new ServerRequestHandler(state, settings, writeAllocator);
    HttpDecoderConfig decoder =
        new HttpDecoderConfig()
            .setMaxInitialLineLength(limits.maxRequestLineLength())
            .setMaxHeaderSize(limits.maxHeaderBytes())
            .setHeadersFactory(CountedHeaders.headers(limits.maxHeaderCount()))
            .setTrailersFactory(CountedHeaders.trailers(limits.maxHeaderCount()))
            .setMaxChunkSize(1 << 20);
    p.addLast("read-start", new ReadStartHandler(handler));
    p.addAfter("read-start", "http", new HttpServerCodec(decoder));
    p.addAfter("http", "yarpc", handler);
  }

  private void configureHttp2(ChannelPipeline p) {
    Channel ch = p.channel();
    int maxStreams = limits.maxConcurrentCallsPerConnection();
    long perConnection = limits.maxPendingBytesPerConnection();
    int streamWindow = H2Tuning.serverStreamWindow(perConnection, maxStreams);
    Http2Settings initial =
        H2Tuning.initialSettings()
            .initialWindowSize(streamWindow)
            .maxHeaderListSize(limits.maxHeaderBytes())
            .maxConcurrentStreams(maxStreams);
    int rstWindowSeconds =
        (int) Math.max(1, Math.min(Integer.MAX_VALUE, ceilSeconds(limits.rstFramesWindow())));
    H2Tuning.ServerBuilder builder = H2Tuning.serverCodecBuilder();
    builder
        .initialSettings(initial)
        .decoderEnforceMaxRstFramesPerWindow(limits.maxRstFramesPerWindow(), rstWindowSeconds)
        .encoderEnforceMaxRstFramesPerWindow(limits.maxRstFramesPerWindow(), rstWindowSeconds)
        .gracefulShutdownTimeoutMillis(
            TimeUnit.NANOSECONDS.toMillis(settings.shutdownTimeoutNanos()));
    Http2FrameCodec codec = builder.build();
    WriteProgress progress = builder.progress();
    ConnectionBudget budget = new ConnectionBudget(state.pending(), perConnection, ch.eventLoop());
    ch.closeFuture().addListener(f -> budget.close());
    Http2MultiplexHandler mux =
        new Http2MultiplexHandler(
            new ChannelInitializer<Http2StreamChannel>() {
              @Override
              protected void initChannel(Http2StreamChannel stream) {
                stream.config().setAllocator(stream.parent().config().getAllocator());
                stream.config().setOption(Http2StreamChannelOption.AUTO_STREAM_FLOW_CONTROL, false);
                Http2StreamFlow flow = new Http2StreamFlow(budget, limits.maxHeaderCount());
                int id = stream.stream().id();
                stream
                    .pipeline()
                    .addLast(
                        flow,
                        new Http2StreamFrameToHttpObjectCodec(true),
                        new ServerRequestHandler(
                            state,
                            settings,
                            writeAllocator,
                            flow,
                            () -> {
                              Http2Stream s = codec.connection().stream(id);
                              return s == null ? -1 : progress.counter(s).written();
                            }));
              }
            });
    p.remove("idle"); // replaced by an idle timer that counts from the last open stream's end
    p.addLast("h2-connection", new Http2ConnectionEvents(codec, settings));
    p.addAfter("h2-connection", "h2", codec);
    p.addAfter("h2", "h2-mux", mux);
    p.addAfter("h2-mux", "h2-errors", new ConnectionErrors());
    H2Tuning.widenConnectionWindow(
        p.context("h2-mux"), codec, H2Tuning.serverConnectionWindow(streamWindow, maxStreams));
  }

  /** Whether {@code cause} (or one of its causes) is an HTTP/2 error, which the codec answers itself. */
  static boolean isHttp2Error(Throwable cause) {
    for (Throwable t = cause; t != null; t = t.getCause()) {
      if (t instanceof Http2Exception) {
        return true;
      }
    }
    return false;
  }

  private static long ceilSeconds(java.time.Duration d) {
    long s = d.getSeconds();
    return d.getNano() > 0 ? s + 1 : s;
  }

  /**
   * The end of an HTTP/2 connection's pipeline: the client's first SETTINGS completes its handshake; errors
   * end the connection. An HTTP/2 connection error is shown here before the codec answers it: the codec
   * sends {@code GOAWAY} with the error's code (such as {@code ENHANCE_YOUR_CALM} past the reset limits) and
   * closes the connection itself, so closing it here first would send a {@code GOAWAY(NO_ERROR)} in its
   * place.
   */
  private static final class ConnectionErrors extends ChannelInboundHandlerAdapter {
    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      log.debug("HTTP/2 connection {} failed: {}", ctx.channel(), cause.toString());
      if (!isHttp2Error(cause)) {
        ctx.close();
      }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (msg instanceof Http2SettingsFrame) {
        ConnectionTimers.handshakeDone(ctx.channel());
      }
      io.netty.util.ReferenceCountUtil.release(msg); // connection-level frames nobody needs
    }
  }

  /** Chooses HTTP/1.1 or h2c from the first bytes, then steps aside (handing on what it has read). */
  private final class ProtocolDetector extends ByteToMessageDecoder {
    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
      int n = Math.min(in.readableBytes(), PREFACE.length);
      boolean prefaceSoFar = settings.http2();
      for (int i = 0; i < n && prefaceSoFar; i++) {
        prefaceSoFar = in.getByte(in.readerIndex() + i) == PREFACE[i];
      }
      if (prefaceSoFar && n < PREFACE.length) {
        return; // wait for more
      }
      if (prefaceSoFar) {
        configureHttp2(ctx.pipeline());
      } else {
        configureHttp1(ctx.pipeline());
      }
      ctx.pipeline().remove(this); // passes the bytes read so far on to the new handlers
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
      if (evt instanceof IdleStateEvent
          || evt == InboundState.DRAIN
          || evt == InboundState.MAX_AGE) {
        ctx.close();
        return;
      }
      super.userEventTriggered(ctx, evt);
    }
  }

  /**
   * HTTP/2 connection-level events, each closing the connection gracefully (GOAWAY, then the open streams
   * finish): no open stream for {@code idleTimeout}; draining (bounded by the shutdown timeout); maximum
   * age (bounded by its grace, or waiting for the streams when there is none).
   */
  private static final class Http2ConnectionEvents extends ChannelInboundHandlerAdapter {
    private final Http2FrameCodec codec;
    private final InboundSettings settings;
    private ChannelHandlerContext ctx;
    private ScheduledFuture<?> idle; // at most one timer: rescheduled when it fires too early
    private long idleSince; // System.nanoTime() when the last open stream closed

    Http2ConnectionEvents(Http2FrameCodec codec, InboundSettings settings) {
      this.codec = codec;
      this.settings = settings;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
      this.ctx = ctx;
      codec
          .connection()
          .addListener(
              new Http2ConnectionAdapter() {
                @Override
                public void onStreamClosed(Http2Stream stream) {
                  if (codec.connection().numActiveStreams() == 0) {
                    becameIdle();
                  }
                }
              });
      becameIdle();
      ctx.channel()
          .closeFuture()
          .addListener(
              f -> {
                if (idle != null) {
                  idle.cancel(false);
                  idle = null;
                }
              });
    }

    /** No stream is open any more: the idle time counts from now (one timer, not one per call). */
    private void becameIdle() {
      idleSince = System.nanoTime();
      if (idle == null && ctx.channel().isOpen()) {
        schedule(settings.idleTimeoutNanos());
      }
    }

    private void schedule(long delayNanos) {
      idle = ctx.executor().schedule(this::idleTimerFired, delayNanos, TimeUnit.NANOSECONDS);
    }

    private void idleTimerFired() {
      idle = null;
      if (codec.connection().numActiveStreams() > 0 || !ctx.channel().isOpen()) {
        return; // busy: the next time it becomes idle starts the timer again
      }
      long left = settings.idleTimeoutNanos() - (System.nanoTime() - idleSince);
      if (left > 0) {
        schedule(left); // it was busy in between
      } else {
        ctx.channel().close(); // through the codec: sends GOAWAY
      }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
      if (evt instanceof IdleStateEvent) {
        return;
      }
      if (evt == InboundState.DRAIN) {
        ctx.channel()
            .close(); // GOAWAY, then close once the open streams are done (bounded by the grace)
        return;
      }
      if (evt == InboundState.MAX_AGE) {
        java.time.Duration grace = settings.limits().maxConnectionAgeGrace();
        codec.gracefulShutdownTimeoutMillis(grace == null ? -1 : grace.toMillis());
        ctx.channel().close(); // GOAWAY, then close once the open streams are done
        return;
      }
      ctx.fireUserEventTriggered(evt);
    }
  }
}
