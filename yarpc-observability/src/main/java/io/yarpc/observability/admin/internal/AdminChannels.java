package io.yarpc.observability.admin.internal;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.yarpc.Dispatcher;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The admin server's Netty side: one event loop thread, a server channel, and per connection {@code
 * IdleStateHandler} → {@code HttpServerCodec} (bounded request line and headers) → {@link
 * AdminHandler}.
 */
public final class AdminChannels {
  /** Longest request line; longer: 414. */
  static final int MAX_REQUEST_LINE = 4096;

  /** Largest header block; larger: 431. */
  static final int MAX_HEADER_BYTES = 16 * 1024;

  /** Largest request body (the endpoints take none); larger: 413. */
  static final int MAX_BODY_BYTES = 4096;

  private static final AtomicInteger SERVERS = new AtomicInteger();

  private final EventLoopGroup group;
  private final Channel server;
  private final InetSocketAddress address;

  private AdminChannels(EventLoopGroup group, Channel server) {
    this.group = group;
    this.server = server;
    this.address = (InetSocketAddress) server.localAddress();
  }

  /**
   * Listens on {@code host:port} and answers with {@link AdminHandler}.
   *
   * @throws IllegalStateException when it cannot listen; nothing is left running then
   */
  public static AdminChannels start(
      Dispatcher dispatcher,
      PrometheusMeterRegistry registry,
      String host,
      int port,
      int maxConnections,
      Duration idleTimeout) {
    EventLoopGroup group =
        new MultiThreadIoEventLoopGroup(
            1,
            new DefaultThreadFactory("yarpc-admin-" + SERVERS.incrementAndGet(), true),
            NioIoHandler.newFactory());
    AdminRoutes routes = new AdminRoutes(dispatcher, registry);
    AtomicInteger open = new AtomicInteger();
    long idleNanos = idleTimeout.toNanos();
    ServerBootstrap b =
        new ServerBootstrap()
            .group(group)
            .channel(NioServerSocketChannel.class)
            .option(ChannelOption.SO_BACKLOG, 64)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    if (open.incrementAndGet() > maxConnections) {
                      open.decrementAndGet();
                      ch.close();
                      return;
                    }
                    ch.closeFuture().addListener(f -> open.decrementAndGet());
                    ch.pipeline()
                        .addLast(new IdleStateHandler(0, 0, idleNanos, TimeUnit.NANOSECONDS))
                        .addLast(
                            new HttpServerCodec(
                                new HttpDecoderConfig()
                                    .setMaxInitialLineLength(MAX_REQUEST_LINE)
                                    .setMaxHeaderSize(MAX_HEADER_BYTES)))
                        .addLast(new AdminHandler(routes));
                  }
                });
    try {
      Channel server = b.bind(host, port).sync().channel();
      return new AdminChannels(group, server);
    } catch (Exception e) { // sync() rethrows the bind failure, checked or not
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw new IllegalStateException(
          "admin server cannot listen on " + host + ":" + port + ": " + e.getMessage(), e);
    }
  }

  /** The bound address. */
  public InetSocketAddress address() {
    return address;
  }

  /** Closes the server channel and every connection, and ends the thread; waits at most 5 s. */
  public void stop() {
    server.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
    group.shutdownGracefully(0, 5, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
  }

  /** {@code host:port} with the literal address ({@code [::1]:9090} for IPv6). */
  public static String hostPort(InetSocketAddress a) {
    String h = a.getAddress() != null ? a.getAddress().getHostAddress() : a.getHostString();
    return (h.indexOf(':') >= 0 ? "[" + h + "]" : h) + ":" + a.getPort();
  }

  /** {@link #hostPort(InetSocketAddress)} for internet addresses, else the address's own text. */
  static String describe(SocketAddress a) {
    if (a == null) {
      return null;
    }
    return a instanceof InetSocketAddress ? hostPort((InetSocketAddress) a) : a.toString();
  }
}
