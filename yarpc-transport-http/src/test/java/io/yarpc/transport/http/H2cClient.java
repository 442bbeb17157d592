package io.yarpc.transport.http;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamChannelBootstrap;
import io.netty.handler.codec.http2.Http2StreamFrameToHttpObjectCodec;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A small h2c (prior knowledge) client on Netty for requests the YARPC outbound never sends (a {@code GET},
 * a {@code HEAD}) and for calls that must share one known connection: one connection, one stream per
 * request, the response aggregated and copied out.
 */
final class H2cClient implements AutoCloseable {
  /** A response: status, headers by lower-case name, body. */
  record Res(int status, Map<String, String> headers, String body) {}

  private final EventLoopGroup group =
      new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  private final Channel connection;

  H2cClient(int port) throws InterruptedException {
    connection =
        new Bootstrap()
            .group(group)
            .channel(NioSocketChannel.class)
            .handler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    ch.pipeline()
                        .addLast(
                            Http2FrameCodecBuilder.forClient().build(),
                            new Http2MultiplexHandler(new ChannelInboundHandlerAdapter()));
                  }
                })
            .connect("127.0.0.1", port)
            .sync()
            .channel();
  }

  /** Sends {@code method path} with no body and waits (at most 10 s) for the response. */
  Res request(HttpMethod method, String path) throws Exception {
    return request(method, path, Map.of(), new byte[0]);
  }

  /**
   * Sends {@code method path} with {@code headers} and {@code body} on a new stream of the one connection,
   * and waits (at most 10 s) for the response.
   */
  Res request(HttpMethod method, String path, Map<String, String> headers, byte[] body)
      throws Exception {
    CompletableFuture<Res> result = new CompletableFuture<>();
    Http2StreamChannel stream =
        new Http2StreamChannelBootstrap(connection)
            .handler(
                new ChannelInitializer<Http2StreamChannel>() {
                  @Override
                  protected void initChannel(Http2StreamChannel ch) {
                    ch.pipeline()
                        .addLast(
                            new Http2StreamFrameToHttpObjectCodec(false),
                            new HttpObjectAggregator(1 << 20),
                            new SimpleChannelInboundHandler<FullHttpResponse>() {
                              @Override
                              protected void channelRead0(
                                  ChannelHandlerContext ctx, FullHttpResponse res) {
                                Map<String, String> headers = new LinkedHashMap<>();
                                res.headers()
                                    .forEach(
                                        e ->
                                            headers.put(
                                                e.getKey().toLowerCase(Locale.ROOT), e.getValue()));
                                result.complete(
                                    new Res(
                                        res.status().code(),
                                        headers,
                                        new String(
                                            ByteBufUtil.getBytes(res.content()),
                                            StandardCharsets.UTF_8)));
                              }

                              @Override
                              public void exceptionCaught(
                                  ChannelHandlerContext ctx, Throwable cause) {
                                result.completeExceptionally(cause);
                              }

                              @Override
                              public void channelInactive(ChannelHandlerContext ctx) {
                                result.completeExceptionally(
                                    new IllegalStateException("stream closed without a response"));
                              }
                            });
                  }
                })
            .open()
            .sync()
            .getNow();
    DefaultFullHttpRequest req =
        new DefaultFullHttpRequest(
            HttpVersion.HTTP_1_1, method, path, Unpooled.wrappedBuffer(body));
    req.headers().set(HttpHeaderNames.HOST, "127.0.0.1");
    headers.forEach(req.headers()::set);
    if (body.length > 0) {
      req.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
    }
    stream.writeAndFlush(req);
    try {
      return result.get(10, TimeUnit.SECONDS);
    } finally {
      stream.close();
    }
  }

  @Override
  public void close() {
    connection.close().awaitUninterruptibly();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
  }
}
