package io.yarpc.transport.http.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http2.Http2Exception;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.yarpc.netty.internal.HeapReads;
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
 * HTTP/2 connection preface and h2c is enabled, the HTTP/2 pipeline (one {@link Http2ServerHandler}, which
 * keeps each stream's state itself). Over TLS, ALPN chooses the
 * pipeline ({@code h2} or {@code http/1.1}; the detector when the client used no ALPN); a plaintext client
 * of an enforced port gets {@link PlaintextRefusal}'s answer.
 *
 * <p>The limits the HTTP/1.1 pipeline applies: request line ({@code maxRequestLineLength}), header block
 * ({@code maxHeaderBytes}) and header count ({@link CountedHeaders}) in the decoder; the HTTP/2 ones are
 * {@link Http2ServerHandler}'s.
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
  private final boolean receiveIntoHeap;
  private final ServerTls tls;

  /**
   * The initializer of an inbound's connections; {@code tls} is the inbound's TLS front (which passes
   * every connection on as plaintext when TLS is off).
   */
  public ServerInitializer(
      InboundState state,
      InboundSettings settings,
      ByteBufAllocator writeAllocator,
      boolean receiveIntoHeap,
      ServerTls tls) {
    this.receiveIntoHeap = receiveIntoHeap;
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
    HeapReads.install(ch.pipeline(), receiveIntoHeap);
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
    p.remove("idle"); // replaced by an idle timer that counts from the last open stream's end
    if (p.get(SslHandler.class) == null) {
      // h2c: ReceivedContent's pieces are the one copy into heap, so reads stay direct. Over TLS
      // HeapReads stays (the TLS engines were not measured with direct input).
      HeapReads.remove(p);
    }
    p.addLast("h2", Http2ServerHandler.create(state, settings, writeAllocator));
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
}
