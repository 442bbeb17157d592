package io.yarpc.netty.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.channels.ClosedChannelException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link IoErrors}: a socket error reads the same under every I/O. */
@Timeout(30)
class IoErrorsTest {
  @ParameterizedTest
  @ValueSource(strings = {"nio", "epoll", "io_uring"})
  void aRefusedConnectionReadsAsUnderNio(String mode) throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort(); // closed again: nothing listens there
    }
    NettyIo io = NettyIo.of(mode);
    EventLoopGroup group = io.newGroup(1, new DefaultThreadFactory("io-errors-" + mode, true));
    try {
      ChannelFuture f =
          new Bootstrap()
              .group(group)
              .channel(io.socketChannel())
              .handler(new ChannelInboundHandlerAdapter())
              .connect(new InetSocketAddress("127.0.0.1", port))
              .await();
      assertThat(f.isSuccess()).isFalse();
      // io_uring's connect error does not name the address, as NIO's and epoll's do
      assertThat(IoErrors.describe(f.cause()))
          .isEqualTo(
              io.name().equals("io_uring")
                  ? "Connection refused"
                  : "Connection refused: /127.0.0.1:" + port);
    } finally {
      group.shutdownGracefully(0, 0, TimeUnit.SECONDS).sync();
    }
  }

  @Test
  void theNativeSystemCallIsLeftOut() {
    assertThat(
            IoErrors.describe(
                new IOException(
                    "recvAddress(..) failed with error(-104): Connection reset by peer")))
        .isEqualTo("Connection reset by peer");
    assertThat(IoErrors.plain("io_uring connect(..) failed with error(-111): Connection refused"))
        .isEqualTo("Connection refused");
    assertThat(
            IoErrors.plain(
                "read failed: finishConnect(..) failed with error(-111):Connection refused"))
        .isEqualTo("read failed: Connection refused");
    assertThat(IoErrors.describe(new IOException("Broken pipe"))).isEqualTo("Broken pipe");
    assertThat(IoErrors.describe(new IOException())).isEqualTo("java.io.IOException");
  }

  @Test
  void aClosedChannelReadsAsAClosedConnectionNotAsTheJdksClass() {
    assertThat(IoErrors.describe(new ClosedChannelException()))
        .isEqualTo("the connection was closed");
    assertThat(IoErrors.describe(new ClosedChannelException() {})) // Netty's own is a subclass
        .isEqualTo("the connection was closed");
  }
}
