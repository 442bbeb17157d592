package io.yarpc.transport.http.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamFrameToHttpObjectCodec;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Sets up each accepted connection: an idle timer, then a detector that looks at the first bytes and
 * installs either the HTTP/1.1 pipeline ({@code HttpServerCodec} + {@link ServerRequestHandler}) or, when
 * they are the HTTP/2 connection preface and h2c is enabled, the HTTP/2 pipeline (frame codec + multiplexer
 * with one {@link ServerRequestHandler} per stream).
 */
public final class ServerInitializer extends ChannelInitializer<SocketChannel> {
  private static final org.slf4j.Logger log =
      org.slf4j.LoggerFactory.getLogger(ServerInitializer.class);
  private static final byte[] PREFACE =
      "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

  private final InboundState state;
  private final InboundSettings settings;
  private final ByteBufAllocator writeAllocator;

  public ServerInitializer(
      InboundState state, InboundSettings settings, ByteBufAllocator writeAllocator) {
    this.state = state;
    this.settings = settings;
    this.writeAllocator = writeAllocator;
  }

  @Override
  protected void initChannel(SocketChannel ch) {
    state.addChannel(ch);
    ch.pipeline()
        .addLast(
            "idle", new IdleStateHandler(0, 0, settings.idleTimeoutNanos(), TimeUnit.NANOSECONDS));
    ch.pipeline().addLast("detect", new ProtocolDetector());
  }

  private void configureHttp1(ChannelPipeline p) {
    ServerRequestHandler handler = new ServerRequestHandler(state, settings, writeAllocator, false);
    HttpDecoderConfig decoder =
        new HttpDecoderConfig()
            .setMaxInitialLineLength(settings.maxHeaderSize())
            .setMaxHeaderSize(settings.maxHeaderSize())
            .setMaxChunkSize(1 << 20);
    p.addAfter("detect", "read-start", new ReadStartHandler(handler));
    p.addAfter("read-start", "http", new HttpServerCodec(decoder));
    p.addAfter("http", "yarpc", handler);
  }

  private void configureHttp2(ChannelPipeline p) {
    Http2Settings initial =
        H2Tuning.initialSettings()
            .maxHeaderListSize(settings.maxHeaderSize())
            .maxConcurrentStreams(settings.maxConcurrentStreams());
    Http2FrameCodec codec =
        H2Tuning.codecBuilder(true)
            .initialSettings(initial)
            .gracefulShutdownTimeoutMillis(
                TimeUnit.NANOSECONDS.toMillis(settings.shutdownTimeoutNanos()))
            .build();
    Http2MultiplexHandler mux =
        new Http2MultiplexHandler(
            new ChannelInitializer<Http2StreamChannel>() {
              @Override
              protected void initChannel(Http2StreamChannel stream) {
                stream.config().setAllocator(stream.parent().config().getAllocator());
                stream
                    .pipeline()
                    .addLast(
                        new Http2StreamFrameToHttpObjectCodec(true),
                        new ServerRequestHandler(state, settings, writeAllocator, true));
              }
            });
    p.addAfter("detect", "h2-connection", new Http2ConnectionEvents(codec));
    p.addAfter("h2-connection", "h2", codec);
    p.addAfter("h2", "h2-mux", mux);
    p.addAfter("h2-mux", "h2-errors", new ConnectionErrors());
    H2Tuning.widenConnectionWindow(p.context("h2-mux"));
  }

  /** The end of an HTTP/2 connection's pipeline: connection errors were answered by the codec (GOAWAY). */
  private static final class ConnectionErrors extends ChannelInboundHandlerAdapter {
    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      log.debug("HTTP/2 connection {} failed: {}", ctx.channel(), cause.toString());
      ctx.close();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
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
      if (evt instanceof IdleStateEvent || evt == InboundState.DRAIN) {
        ctx.close();
        return;
      }
      super.userEventTriggered(ctx, evt);
    }
  }

  /** HTTP/2 connection-level events: idle with no open stream, or draining, closes gracefully (GOAWAY). */
  private static final class Http2ConnectionEvents extends ChannelInboundHandlerAdapter {
    private final Http2FrameCodec codec;

    Http2ConnectionEvents(Http2FrameCodec codec) {
      this.codec = codec;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
      if (evt instanceof IdleStateEvent) {
        if (codec.connection().numActiveStreams() == 0) {
          ctx.channel().close(); // through the codec: sends GOAWAY
        }
        return;
      }
      if (evt == InboundState.DRAIN) {
        ctx.channel()
            .close(); // GOAWAY, then close once the open streams are done (bounded by the grace)
        return;
      }
      ctx.fireUserEventTriggered(evt);
    }
  }
}
