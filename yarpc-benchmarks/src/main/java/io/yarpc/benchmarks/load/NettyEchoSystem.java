package io.yarpc.benchmarks.load;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.DefaultHttp2WindowUpdateFrame;
import io.netty.handler.codec.http2.Http2CodecUtil;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2FrameStream;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.benchmarks.proto.EchoGrpc;
import io.yarpc.encoding.protobuf.YarpcChannel;
import io.yarpc.netty.internal.NettyIo;
import io.yarpc.transport.http.HttpOutbound;
import io.yarpc.transport.http.HttpTransport;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The floor under every HTTP path: a bare Netty echo server, HTTP/1.1 keep-alive and h2c with prior
 * knowledge on one port, that aggregates a request's body and writes it back with status 200 — no
 * routing, no headers read, no handler hop, no deadline. The client is YARPC's HTTP outbound over
 * HTTP/1.1 ({@link #NETTY_HTTP}) or h2c ({@link #NETTY_H2C}), exactly as in the {@code yarpc-http} and
 * {@code yarpc-h2c} rows, so the server columns of these rows are what Netty alone costs per call. The
 * echoed body is the serialized request, which parses as the response (the echo messages are one type).
 * Its h2c side announces 1 MiB stream and 16 MiB connection windows, as gRPC servers do; its event loops
 * are the JVM's {@link NettyIo} and named {@code bench-server-netty-N}.
 */
final class NettyEchoSystem implements EchoSystem {
  /** Bare Netty over HTTP/1.1. */
  static final String NETTY_HTTP = "netty-http";

  /** Bare Netty over h2c. */
  static final String NETTY_H2C = "netty-h2c";

  private static final int MAX_BODY = 64 << 20;
  private static final int MAX_PIECES = MAX_BODY / Http2CodecUtil.DEFAULT_MAX_FRAME_SIZE;
  private static final int STREAM_WINDOW = 1 << 20;
  private static final int CONNECTION_WINDOW = 16 << 20;

  private final String name;
  private final boolean h2c;
  private final ExecutorService clientCallbacks =
      NamedThreads.yarpcPool(NamedThreads.CLIENT_PREFIX, "callback");
  private EventLoopGroup loops;
  private Channel server;
  private Dispatcher client;
  private EchoGrpc.EchoStub stub;

  NettyEchoSystem(String name) {
    this.name = name;
    this.h2c = name.equals(NETTY_H2C);
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public int startServer() throws Exception {
    NettyIo io = NettyIo.get();
    loops = io.newGroup(1, new DefaultThreadFactory(NamedThreads.SERVER_PREFIX + "netty", true));
    server =
        new ServerBootstrap()
            .group(loops)
            .channel(io.serverChannel())
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    ch.pipeline().addLast(new ProtocolSniffer());
                  }
                })
            .bind(new InetSocketAddress("127.0.0.1", 0))
            .sync()
            .channel();
    return ((InetSocketAddress) server.localAddress()).getPort();
  }

  @Override
  public void startClient(int port, int spacers) throws Exception {
    HttpOutbound out =
        HttpTransport.builder()
            .build()
            .singleOutboundBuilder("127.0.0.1:" + port)
            .http2(h2c)
            .build();
    client =
        Dispatcher.builder(YarpcSystem.CLIENT)
            .outbound(YarpcSystem.SERVER, Outbounds.unary(out))
            .build();
    client.start();
    stub =
        EchoGrpc.newStub(
            YarpcChannel.builder(client.clientConfig(YarpcSystem.SERVER))
                .executor(clientCallbacks)
                .defaultTimeout(Duration.ofSeconds(30))
                .build());
  }

  @Override
  public EchoGrpc.EchoStub stub() {
    return stub;
  }

  @Override
  public boolean supportsStreaming() {
    return false;
  }

  @Override
  public void close() {
    try {
      if (client != null) {
        client.stop();
      }
    } finally {
      if (server != null) {
        server.close().syncUninterruptibly();
      }
      if (loops != null) {
        loops.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
      }
      clientCallbacks.shutdownNow();
    }
  }

  /** Reads the first bytes: the HTTP/2 preface selects h2c, anything else HTTP/1.1. */
  private static final class ProtocolSniffer extends ByteToMessageDecoder {
    private static final ByteBuf PREFACE = Http2CodecUtil.connectionPrefaceBuf();

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
      int n = Math.min(in.readableBytes(), PREFACE.readableBytes());
      boolean prefix = ByteBufUtil.equals(in, in.readerIndex(), PREFACE, 0, n);
      if (prefix && n < PREFACE.readableBytes()) {
        return; // could still be either: wait for more
      }
      if (prefix) {
        Http2Settings settings = Http2Settings.defaultSettings().initialWindowSize(STREAM_WINDOW);
        ctx.pipeline()
            .addAfter(
                ctx.name(),
                "h2",
                Http2FrameCodecBuilder.forServer().initialSettings(settings).build())
            .addAfter("h2", "echo", new H2Echo());
      } else {
        ctx.pipeline()
            .addAfter(ctx.name(), "http1", new HttpServerCodec())
            .addAfter("http1", "aggregate", new HttpObjectAggregator(MAX_BODY))
            .addAfter("aggregate", "echo", new Http1Echo());
      }
      ctx.pipeline().remove(this); // hands the bytes read so far to the new handlers
    }
  }

  /** Echoes each aggregated HTTP/1.1 request's body, keeping the connection open. */
  private static final class Http1Echo extends SimpleChannelInboundHandler<FullHttpRequest> {
    Http1Echo() {
      super(false);
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
      FullHttpResponse response =
          new DefaultFullHttpResponse(
              HttpVersion.HTTP_1_1, HttpResponseStatus.OK, request.content());
      response.headers().set(HttpHeaderNames.CONTENT_LENGTH, request.content().readableBytes());
      ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
    }
  }

  /** Echoes each HTTP/2 stream's body once it ended, returning flow-control credit as data arrives. */
  private static final class H2Echo extends ChannelInboundHandlerAdapter {
    private final Map<Http2FrameStream, CompositeByteBuf> bodies = new HashMap<>();

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
      // the connection window beyond the 64 KiB default, as gRPC servers announce
      ctx.writeAndFlush(
          new DefaultHttp2WindowUpdateFrame(
              CONNECTION_WINDOW - Http2CodecUtil.DEFAULT_WINDOW_SIZE));
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (msg instanceof Http2HeadersFrame) {
        Http2HeadersFrame headers = (Http2HeadersFrame) msg;
        if (headers.isEndStream()) {
          reply(ctx, headers.stream(), ctx.alloc().compositeBuffer());
        } else {
          // as many pieces as frames come: a composite that consolidates would copy the body again
          bodies.put(headers.stream(), ctx.alloc().compositeBuffer(MAX_PIECES));
        }
      } else if (msg instanceof Http2DataFrame) {
        Http2DataFrame data = (Http2DataFrame) msg;
        Http2FrameStream stream = data.stream();
        CompositeByteBuf body = bodies.get(stream);
        int credit = data.initialFlowControlledBytes();
        if (body == null) {
          data.release();
        } else {
          body.addComponent(true, data.content());
        }
        if (credit > 0) {
          ctx.write(new DefaultHttp2WindowUpdateFrame(credit).stream(stream));
        }
        if (data.isEndStream() && body != null) {
          bodies.remove(stream);
          reply(ctx, stream, body);
        }
      } else {
        ReferenceCountUtil.release(msg);
      }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
      ctx.flush();
    }

    private static void reply(ChannelHandlerContext ctx, Http2FrameStream stream, ByteBuf body) {
      ctx.write(
          new DefaultHttp2HeadersFrame(new DefaultHttp2Headers().status("200"), false)
              .stream(stream));
      ctx.write(new DefaultHttp2DataFrame(body, true).stream(stream));
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      bodies.values().forEach(ByteBuf::release);
      bodies.clear();
      ctx.fireChannelInactive();
    }
  }
}
