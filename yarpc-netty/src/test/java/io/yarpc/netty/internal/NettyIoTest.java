package io.yarpc.netty.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.uring.IoUring;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link NettyIo}: which I/O each mode gives here, and that each one carries bytes over loopback. */
@Timeout(30)
class NettyIoTest {
  @Test
  void modesFallBackToNioWhenTheirNativeIoIsMissing() {
    assertThat(NettyIo.of("nio").name()).isEqualTo("nio");
    assertThat(NettyIo.of("auto").name()).isEqualTo(Epoll.isAvailable() ? "epoll" : "nio");
    assertThat(NettyIo.of("EPOLL").name()).isEqualTo(Epoll.isAvailable() ? "epoll" : "nio");
    assertThat(NettyIo.of("io-uring").name()).isEqualTo(IoUring.isAvailable() ? "io_uring" : "nio");
  }

  @Test
  void theJvmWideChoiceFollowsTheProperty() {
    String mode = System.getProperty(NettyIo.PROPERTY, NettyIo.DEFAULT_MODE);
    assertThat(NettyIo.get().name()).isEqualTo(NettyIo.of(mode).name());
  }

  @Test
  void anUnknownModeIsRefusedWithTheValidNames() {
    assertThatThrownBy(() -> NettyIo.of("kqueue"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("yarpc.io must be auto, epoll, io_uring or nio, not \"kqueue\"");
  }

  @ParameterizedTest
  @ValueSource(strings = {"nio", "epoll", "io_uring"})
  void echoesOverLoopback(String mode) throws Exception {
    NettyIo io = NettyIo.of(mode);
    EventLoopGroup group = io.newGroup(1, new DefaultThreadFactory("netty-io-test-" + mode, true));
    try {
      Channel server =
          new ServerBootstrap()
              .group(group)
              .channelFactory(io::newServerChannel)
              .childHandler(
                  new SimpleChannelInboundHandler<ByteBuf>() {
                    @Override
                    protected void channelRead0(ChannelHandlerContext ctx, ByteBuf msg) {
                      ctx.writeAndFlush(msg.retain());
                    }
                  })
              .bind(new InetSocketAddress("127.0.0.1", 0))
              .sync()
              .channel();
      CompletableFuture<String> echoed = new CompletableFuture<>();
      StringBuilder got = new StringBuilder();
      Channel client =
          new Bootstrap()
              .group(group)
              .channel(io.socketChannel())
              .handler(
                  new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                      ch.pipeline()
                          .addLast(
                              new SimpleChannelInboundHandler<ByteBuf>() {
                                @Override
                                protected void channelRead0(ChannelHandlerContext ctx, ByteBuf m) {
                                  got.append(m.toString(StandardCharsets.US_ASCII));
                                  if (got.length() >= 5) {
                                    echoed.complete(got.toString());
                                  }
                                }
                              });
                    }
                  })
              .connect(server.localAddress())
              .sync()
              .channel();
      assertThat(server.getClass()).isAssignableTo(io.serverChannel());
      client.writeAndFlush(Unpooled.copiedBuffer("hello", StandardCharsets.US_ASCII));
      assertThat(echoed.get(10, TimeUnit.SECONDS)).isEqualTo("hello");
      client.close().sync();
      server.close().sync();
    } finally {
      group.shutdownGracefully(0, 0, TimeUnit.SECONDS).sync();
    }
  }
}
