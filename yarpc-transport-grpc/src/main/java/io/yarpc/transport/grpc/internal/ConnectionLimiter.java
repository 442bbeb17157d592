package io.yarpc.transport.grpc.internal;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFactory;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ServerChannel;
import io.netty.channel.socket.ServerSocketChannel;
import io.yarpc.netty.internal.NettyIo;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The inbound's limit on open connections, which grpc-java's server has no setting for: the server
 * channels it makes ({@link #serverChannels()}, given to {@code NettyServerBuilder.channelFactory}) carry
 * this handler first in their pipeline, ahead of the bootstrap's acceptor. It sees every accepted
 * connection before grpc-java does; one beyond the limit is closed at once — before it is registered
 * with an event loop, so nothing is read from it and grpc-java never learns of it — and counted.
 *
 * <p>A connection counts from its acceptance until its channel closes. Thread-safe: connections are
 * accepted on the server channel's event loop and close on their own.
 */
@ChannelHandler.Sharable
public final class ConnectionLimiter extends ChannelInboundHandlerAdapter {
  private final int maxConnections;
  private final AtomicInteger open = new AtomicInteger();
  private final LongAdder refused = new LongAdder();

  /** A limiter that keeps at most {@code maxConnections} open. */
  public ConnectionLimiter(int maxConnections) {
    this.maxConnections = maxConnections;
  }

  /** Server channels (of {@link NettyIo#get()}'s I/O) that enforce this limit. */
  public ChannelFactory<ServerChannel> serverChannels() {
    return () -> {
      ServerSocketChannel channel = NettyIo.get().newServerChannel();
      channel.pipeline().addLast("yarpc-connection-limit", this);
      return channel;
    };
  }

  /** Connections open now. */
  public int open() {
    return open.get();
  }

  /** Connections closed at once because {@code maxConnections} were open, since the start. */
  public long refused() {
    return refused.sum();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (!(msg instanceof Channel)) {
      ctx.fireChannelRead(msg);
      return;
    }
    Channel child = (Channel) msg;
    if (open.incrementAndGet() > maxConnections) {
      open.decrementAndGet();
      refused.increment();
      // Not registered yet: closes the socket without an event loop, as the bootstrap's acceptor
      // does
      // with a connection it cannot register.
      child.unsafe().closeForcibly();
      return;
    }
    // (A connection whose registration fails is force-closed without completing this future; that
    // happens only while the event loops shut down, when the count no longer matters.)
    child.closeFuture().addListener(f -> open.decrementAndGet());
    ctx.fireChannelRead(child);
  }
}
