package io.yarpc.netty.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.PreferHeapByteBufAllocator;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetSocketAddress;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link HeapReads}: on every I/O, a connection that receives into heap reads heap buffers and one that
 * does not reads direct ones, the bytes intact and every buffer released (the paranoid leak detector);
 * the copy is only in native pipelines, NIO reading into heap by itself; {@link HeapReads#remove} takes it
 * out again.
 */
@Timeout(30)
class HeapReadsTest {
  @ParameterizedTest(name = "{0} receiveIntoHeap={1} removed={2}")
  @CsvSource({
    "nio,true,false",
    "nio,false,false",
    "epoll,true,false",
    "epoll,false,false",
    "io_uring,true,false",
    "io_uring,false,false",
    "nio,true,true",
    "epoll,true,true",
    "io_uring,true,true"
  })
  void readsLandWhereTheConnectionReceives(String mode, boolean heap, boolean removed)
      throws Exception {
    NettyIo io = NettyIo.of(mode); // NIO where that native I/O is missing
    boolean nativeIo = !io.name().equals("nio");
    ByteBufAllocator alloc =
        heap
            ? new PreferHeapByteBufAllocator(PooledByteBufAllocator.DEFAULT)
            : PooledByteBufAllocator.DEFAULT;
    byte[] sent = new byte[256 << 10];
    new Random(7).nextBytes(sent);
    ConcurrentLinkedQueue<Boolean> direct = new ConcurrentLinkedQueue<>();
    CRC32 crc = new CRC32();
    CompletableFuture<Long> received = new CompletableFuture<>();
    CompletableFuture<Boolean> copying = new CompletableFuture<>();
    EventLoopGroup group = io.newGroup(1, new DefaultThreadFactory("heap-reads-" + mode, true));
    try {
      Channel server =
          new ServerBootstrap()
              .group(group)
              .channelFactory(io::newServerChannel)
              .childOption(ChannelOption.ALLOCATOR, alloc)
              .childHandler(
                  new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                      HeapReads.install(ch.pipeline(), heap);
                      if (removed) {
                        HeapReads.remove(ch.pipeline()); // as h2c does once it is detected
                      }
                      copying.complete(ch.pipeline().get(HeapReads.NAME) != null);
                      ch.pipeline()
                          .addLast(
                              new SimpleChannelInboundHandler<ByteBuf>() {
                                long total;

                                @Override
                                protected void channelRead0(ChannelHandlerContext ctx, ByteBuf m) {
                                  direct.add(m.isDirect());
                                  crc.update(m.nioBuffer());
                                  total += m.readableBytes();
                                  if (total == sent.length) {
                                    received.complete(crc.getValue());
                                  }
                                }
                              });
                    }
                  })
              .bind(new InetSocketAddress("127.0.0.1", 0))
              .sync()
              .channel();
      Channel client =
          new Bootstrap()
              .group(group)
              .channel(io.socketChannel())
              .handler(
                  new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {}
                  })
              .connect(server.localAddress())
              .sync()
              .channel();
      client.writeAndFlush(Unpooled.wrappedBuffer(sent)).sync();
      CRC32 expected = new CRC32();
      expected.update(sent);
      assertThat(received.get(10, TimeUnit.SECONDS)).isEqualTo(expected.getValue());
      // without the copy, native reads stay direct; NIO reads into heap by itself
      assertThat(direct).isNotEmpty().containsOnly(!heap || (removed && nativeIo));
      assertThat(copying.get()).isEqualTo(heap && nativeIo && !removed);
      client.close().sync();
      server.close().sync();
    } finally {
      group.shutdownGracefully(0, 0, TimeUnit.SECONDS).sync();
    }
  }
}
