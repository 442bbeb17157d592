package io.yarpc.transport.http;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.Http2ConnectionDecoder;
import io.netty.handler.codec.http2.Http2ConnectionEncoder;
import io.netty.handler.codec.http2.Http2ConnectionHandler;
import io.netty.handler.codec.http2.Http2FrameAdapter;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2Settings;
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A bare Netty h2c (prior knowledge) server for tests of the HTTP/2 client: it answers every request with
 * its own body (status 200, {@code rpc-service} echoed; procedure {@value #HOLD}: never; {@value #HALF}:
 * half of it at first) and records, in
 * order, the frames of the client that real servers never show: its SETTINGS, WINDOW_UPDATEs (stream 0 for
 * the connection), HEADERS, DATA sizes and RST_STREAMs. Binds to 127.0.0.1.
 */
final class RawH2Server implements AutoCloseable {
  /** What the client sent, in order. */
  sealed interface Event permits ClientSettings, WindowUpdate, Headers, Data, Reset {}

  record ClientSettings(Http2Settings settings) implements Event {}

  record WindowUpdate(int stream, int increment) implements Event {}

  record Headers(int stream, boolean endStream) implements Event {}

  record Data(int stream, int bytes, boolean endStream) implements Event {}

  record Reset(int stream, long errorCode) implements Event {}

  /** Requests for this procedure are never answered. */
  static final String HOLD = "hold";

  /**
   * Requests for this procedure get their headers (with the whole body's {@code content-length}) and the
   * first half of their body at once, and the rest only before the next answer to another procedure.
   */
  static final String HALF = "half";

  /** The {@value #HALF} answers whose first half was written. */
  final AtomicInteger halvesSent = new AtomicInteger();

  final List<Event> events = new CopyOnWriteArrayList<>();
  private final EventLoopGroup group =
      new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  private final Channel server;

  private final int connectionWindow;

  /**
   * A server announcing {@code settings} (null: Netty's defaults) whose connection window is {@code
   * connectionWindow} (raised from 64 KiB when the client's first SETTINGS arrive).
   */
  RawH2Server(Http2Settings settings, int connectionWindow) throws InterruptedException {
    this.connectionWindow = connectionWindow;
    server =
        new ServerBootstrap()
            .group(group)
            .channel(NioServerSocketChannel.class)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    ch.pipeline().addLast(new EchoHandlerBuilder(settings).build());
                  }
                })
            .bind(new InetSocketAddress("127.0.0.1", 0))
            .sync()
            .channel();
  }

  int port() {
    return ((InetSocketAddress) server.localAddress()).getPort();
  }

  /** The client's SETTINGS frames, in order. */
  List<Http2Settings> clientSettings() {
    return events.stream()
        .filter(e -> e instanceof ClientSettings)
        .map(e -> ((ClientSettings) e).settings())
        .toList();
  }

  /** The client's WINDOW_UPDATE increments for the connection (stream 0), in order. */
  List<Integer> connectionWindowUpdates() {
    return events.stream()
        .filter(e -> e instanceof WindowUpdate w && w.stream() == 0)
        .map(e -> ((WindowUpdate) e).increment())
        .toList();
  }

  @Override
  public void close() {
    server.close().syncUninterruptibly();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }

  private final class EchoHandlerBuilder
      extends io.netty.handler.codec.http2.AbstractHttp2ConnectionHandlerBuilder<
          Http2ConnectionHandler, EchoHandlerBuilder> {
    private final Echo echo = new Echo();

    EchoHandlerBuilder(Http2Settings settings) {
      server(true);
      if (settings != null) {
        initialSettings(settings);
      }
      frameListener(echo);
    }

    @Override
    public Http2ConnectionHandler build() {
      return super.build();
    }

    @Override
    protected Http2ConnectionHandler build(
        Http2ConnectionDecoder decoder, Http2ConnectionEncoder encoder, Http2Settings settings) {
      Http2ConnectionHandler handler = new Http2ConnectionHandler(decoder, encoder, settings) {};
      echo.handler = handler;
      return handler;
    }
  }

  /** Echoes each request once its stream ends; records the client's flow-control frames. */
  private final class Echo extends Http2FrameAdapter {
    Http2ConnectionHandler handler;
    private final Map<Integer, ByteBuf> bodies = new HashMap<>();
    private final Map<Integer, CharSequence> services = new HashMap<>();
    private final Map<Integer, Boolean> halves = new HashMap<>();
    private final Map<Integer, ByteBuf> secondHalves = new LinkedHashMap<>();

    @Override
    public void onSettingsRead(ChannelHandlerContext ctx, Http2Settings settings) {
      events.add(new ClientSettings(settings));
      var connection = handler.connection();
      var flow = connection.local().flowController();
      int more = connectionWindow - flow.initialWindowSize(connection.connectionStream());
      if (more > 0) {
        try {
          flow.incrementWindowSize(connection.connectionStream(), more);
        } catch (io.netty.handler.codec.http2.Http2Exception e) {
          throw new IllegalStateException(e);
        }
        handler.flush(ctx);
      }
    }

    @Override
    public void onWindowUpdateRead(ChannelHandlerContext ctx, int streamId, int increment) {
      events.add(new WindowUpdate(streamId, increment));
    }

    @Override
    public void onRstStreamRead(ChannelHandlerContext ctx, int streamId, long errorCode) {
      events.add(new Reset(streamId, errorCode));
      ByteBuf body = bodies.remove(streamId);
      if (body != null) {
        body.release();
      }
      ByteBuf rest = secondHalves.remove(streamId);
      if (rest != null) {
        rest.release();
      }
    }

    @Override
    public void onHeadersRead(
        ChannelHandlerContext ctx,
        int streamId,
        Http2Headers headers,
        int padding,
        boolean endStream) {
      events.add(new Headers(streamId, endStream));
      if (HOLD.contentEquals(headers.get("rpc-procedure", ""))) {
        return; // never answered
      }
      services.put(streamId, headers.get("rpc-service"));
      halves.put(streamId, HALF.contentEquals(headers.get("rpc-procedure", "")));
      bodies.put(streamId, ctx.alloc().buffer());
      if (endStream) {
        answer(ctx, streamId);
      }
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
      onHeadersRead(ctx, streamId, headers, padding, endStream);
    }

    @Override
    public int onDataRead(
        ChannelHandlerContext ctx, int streamId, ByteBuf data, int padding, boolean endOfStream) {
      events.add(new Data(streamId, data.readableBytes(), endOfStream));
      int consumed = data.readableBytes() + padding;
      ByteBuf body = bodies.get(streamId);
      if (body != null) {
        body.writeBytes(data);
      }
      if (endOfStream) {
        answer(ctx, streamId);
      }
      return consumed;
    }

    private void answer(ChannelHandlerContext ctx, int streamId) {
      ByteBuf body = bodies.remove(streamId);
      if (body == null) {
        return;
      }
      Http2Headers headers =
          new DefaultHttp2Headers().status("200").setInt("content-length", body.readableBytes());
      CharSequence service = services.remove(streamId);
      if (service != null) {
        headers.set("rpc-service", service);
      }
      boolean half = Boolean.TRUE.equals(halves.remove(streamId));
      if (!half) {
        secondHalves.forEach(
            (id, rest) -> handler.encoder().writeData(ctx, id, rest, 0, true, ctx.newPromise()));
        secondHalves.clear();
      }
      handler.encoder().writeHeaders(ctx, streamId, headers, 0, false, ctx.newPromise());
      if (half) {
        int first = body.readableBytes() / 2;
        handler
            .encoder()
            .writeData(ctx, streamId, body.readRetainedSlice(first), 0, false, ctx.newPromise());
        secondHalves.put(streamId, body);
      } else {
        handler.encoder().writeData(ctx, streamId, body, 0, true, ctx.newPromise());
      }
      handler.flush(ctx);
      if (half) {
        halvesSent.incrementAndGet();
      }
    }
  }
}
