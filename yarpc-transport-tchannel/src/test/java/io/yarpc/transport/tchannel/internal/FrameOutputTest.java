package io.yarpc.transport.tchannel.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.yarpc.transport.Body;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Where frames go from other threads: one event loop task and one flush per batch. */
class FrameOutputTest {
  private final EventLoopGroup group =
      new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  private final LinkedBlockingQueue<ByteBuf> received = new LinkedBlockingQueue<>();
  private final AtomicInteger flushes = new AtomicInteger();
  private final FrameOutput out = new FrameOutput(EmbeddedParts.ALLOC);
  private final List<Channel> channels = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    if (!group.isShuttingDown()) {
      for (Channel c : channels) {
        c.close().sync();
      }
    }
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    ByteBuf b;
    while ((b = received.poll()) != null) {
      b.release();
    }
  }

  /** A loopback connection whose client side counts flushes; the output writes on the client side. */
  private Channel connect() throws Exception {
    Channel server =
        new ServerBootstrap()
            .group(group)
            .channel(NioServerSocketChannel.class)
            .childHandler(
                new ChannelInboundHandlerAdapter() {
                  @Override
                  public void channelRead(ChannelHandlerContext ctx, Object msg) {
                    received.add((ByteBuf) msg);
                  }
                })
            .bind("127.0.0.1", 0)
            .sync()
            .channel();
    channels.add(server);
    Channel client =
        new Bootstrap()
            .group(group)
            .channel(NioSocketChannel.class)
            .option(ChannelOption.TCP_NODELAY, true)
            .handler(
                new ChannelOutboundHandlerAdapter() {
                  @Override
                  public void flush(ChannelHandlerContext ctx) {
                    flushes.incrementAndGet();
                    ctx.flush();
                  }
                })
            .connect(server.localAddress())
            .sync()
            .channel();
    channels.add(client);
    client.pipeline().addLast(new ChannelInboundHandlerAdapter());
    out.attach(client.pipeline().lastContext());
    return client;
  }

  /** A write of one frame with a body that the output must release. */
  private final class OneFrame implements FrameOutput.LoopWrite {
    final Body body = Body.of(new byte[] {1});
    final byte tag;
    volatile boolean rejected;

    OneFrame(int tag) {
      this.tag = (byte) tag;
    }

    @Override
    public void write() {
      out.writeMessage(List.of(Unpooled.wrappedBuffer(new byte[] {tag})), body);
    }

    @Override
    public void rejected() {
      rejected = true;
      body.release();
    }
  }

  @Test
  void writesFromOtherThreadsShareOneTaskAndOneFlush() throws Exception {
    Channel client = connect();
    CountDownLatch busy = new CountDownLatch(1);
    client.eventLoop().execute(() -> awaitQuietly(busy)); // the loop is busy: the writes queue up
    int baseline = flushes.get();
    List<OneFrame> writes = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      OneFrame w = new OneFrame(i);
      writes.add(w);
      out.writeSoon(w);
    }
    busy.countDown();
    assertThat(receivedBytes(3)).as("in the order handed over").containsExactly(0, 1, 2);
    assertThat(flushes.get() - baseline).as("flushes for the batch").isEqualTo(1);
    for (OneFrame w : writes) {
      assertThat(w.body.isReleased()).as("a copied body is released once written").isTrue();
      assertThat(w.rejected).isFalse();
    }
  }

  @Test
  void writesOnTheEventLoopOutsideAReadAreFlushedAtOnce() throws Exception {
    Channel client = connect();
    int baseline = flushes.get();
    OneFrame w = new OneFrame(7);
    client.eventLoop().submit(() -> out.writeSoon(w)).sync();
    assertThat(receivedBytes(1)).containsExactly(7);
    assertThat(flushes.get() - baseline).isEqualTo(1);
  }

  @Test
  void writesHandedToAStoppedEventLoopAreRejected() throws Exception {
    connect();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    OneFrame w = new OneFrame(1);
    out.writeSoon(w);
    assertThat(w.rejected).as("told on the calling thread").isTrue();
    assertThat(w.body.isReleased()).isTrue();
  }

  /** The next {@code n} bytes the server side reads (TCP may bring them in one read or several). */
  private byte[] receivedBytes(int n) throws InterruptedException {
    byte[] bytes = new byte[n];
    int got = 0;
    while (got < n) {
      ByteBuf b = received.poll(10, TimeUnit.SECONDS);
      assertThat(b).as("bytes after " + got).isNotNull();
      int k = Math.min(b.readableBytes(), n - got);
      b.readBytes(bytes, got, k);
      got += k;
      b.release();
    }
    return bytes;
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
