package io.yarpc.transport.tchannel;

import static java.util.Objects.requireNonNull;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.yarpc.transport.AbstractLifecycle;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.Router;
import io.yarpc.transport.Transport;
import io.yarpc.transport.tchannel.internal.CallCodec;
import io.yarpc.transport.tchannel.internal.Connection;
import io.yarpc.transport.tchannel.internal.ConnectionHost;
import io.yarpc.transport.tchannel.internal.FrameDecoder;
import io.yarpc.transport.tchannel.internal.InitFrames;
import io.yarpc.transport.tchannel.internal.Settings;
import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Serves the dispatcher's unary procedures over TChannel: listens on a TCP address (default {@code
 * 127.0.0.1}, a free port; see {@link #address()}), completes the init handshake with each connecting
 * peer, and turns every call req into a YARPC request for the router (docs/spec/wire-tchannel.md §12.2).
 *
 * <p>Each call: transport {@code tchannel}, the deadline from the ttl (a ttl of 0 is answered with a
 * bad-request error frame {@code timeout required}); the handler runs through the dispatcher's handler
 * (which hops to its executor; the event loop never blocks). A successful response is a call res with the
 * response's headers and {@code $rpc$-service} in arg2; an exception carrying an application-error
 * response becomes a call res with code 0x01 and the {@code $rpc$-error-*} keys; any other error an error
 * frame mapped by yarpc-go's table (docs/spec/wire-tchannel.md §12.4). Oneway and streaming procedures are refused
 * as yarpc-go does ({@code unimplemented}, a bad-request error frame). A cancel frame cancels the handler's
 * call.
 *
 * <p>Ownership: the request body (arg3, byte access over the received buffers) belongs to the invocation,
 * which releases it when the handler completes; this inbound owns and releases every response body it
 * writes (also the body of a response attached to an exception). Stopping the inbound closes its listening
 * socket and the connections it accepted.
 */
public final class TChannelInbound extends AbstractLifecycle implements Inbound {
  private final TChannelTransport transport;
  private final String host;
  private final int port;
  private final ChannelGroup accepted =
      new DefaultChannelGroup("tchannel-inbound", GlobalEventExecutor.INSTANCE);
  private volatile Router router;
  private volatile Channel serverChannel;
  private volatile InetSocketAddress address;
  private volatile String hostPort = InitFrames.EPHEMERAL_HOST_PORT;

  private TChannelInbound(Builder b) {
    this.transport = b.transport;
    this.host = b.host;
    this.port = b.port;
  }

  @Override
  public void setRouter(Router router) {
    this.router = requireNonNull(router, "router");
  }

  /** The router calls are served from (null before {@link #setRouter}). */
  Router router() {
    return router;
  }

  @Override
  public List<Transport> transports() {
    return List.of(transport);
  }

  @Override
  public String transportName() {
    return CallCodec.TRANSPORT_NAME;
  }

  /** The address the inbound listens on; null before {@link #start()}. */
  public InetSocketAddress address() {
    return address;
  }

  /**
   * The {@code host:port} peers dial to reach this inbound (and that it advertises as {@code host_port});
   * {@code 0.0.0.0:0} before start or when it listens on a wildcard or IPv6 address.
   */
  public String hostPort() {
    return hostPort;
  }

  @Override
  protected void doStart() throws Exception {
    if (router == null) {
      throw new IllegalStateException(
          "a tchannel inbound needs a router before it starts (setRouter)");
    }
    transport.start();
    Settings settings = transport.settings();
    ConnectionHost connectionHost = new AcceptedHost(settings);
    ServerBootstrap b =
        new ServerBootstrap()
            .group(transport.group())
            .channel(NioServerSocketChannel.class)
            .childOption(ChannelOption.ALLOCATOR, transport.receiveAllocator())
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    accepted.add(ch);
                    ch.pipeline()
                        .addLast(new FrameDecoder(), new Connection(false, connectionHost));
                  }
                });
    Channel ch = b.bind(host, port).sync().channel();
    serverChannel = ch;
    InetSocketAddress bound = (InetSocketAddress) ch.localAddress();
    address = bound;
    hostPort =
        bound.getAddress() instanceof Inet4Address && !bound.getAddress().isAnyLocalAddress()
            ? bound.getAddress().getHostAddress() + ":" + bound.getPort()
            : InitFrames.EPHEMERAL_HOST_PORT;
    transport.inboundStarted(this);
  }

  @Override
  protected void doStop() {
    transport.inboundStopped(this);
    Channel ch = serverChannel;
    if (ch != null) {
      ch.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
    closeConnections();
  }

  /** How many connections this inbound has accepted and not closed; for tests. */
  int acceptedConnections() {
    return accepted.size();
  }

  /** Closes every connection this inbound accepted. */
  void closeConnections() {
    accepted.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
  }

  @Override
  public String toString() {
    return "TChannelInbound{" + (address == null ? host + ":" + port : address) + "}";
  }

  private final class AcceptedHost implements ConnectionHost {
    private final Settings settings;

    AcceptedHost(Settings settings) {
      this.settings = settings;
    }

    @Override
    public Settings settings() {
      return settings;
    }

    @Override
    public Router router() {
      return router;
    }

    @Override
    public String localHostPort() {
      return hostPort;
    }

    @Override
    public void onHandshake(Connection connection) {
      transport.acceptedHandshake(connection);
    }

    @Override
    public void onClose(Connection connection) {
      transport.acceptedClosed(connection);
    }
  }

  /** Builds a {@link TChannelInbound}; not thread-safe. */
  public static final class Builder {
    private final TChannelTransport transport;
    private String host = "127.0.0.1";
    private int port;

    Builder(TChannelTransport transport) {
      this.transport = transport;
    }

    /** The address to listen on; default {@code 127.0.0.1}. */
    public Builder host(String host) {
      this.host = requireNonNull(host, "host");
      return this;
    }

    /** The port to listen on; default 0 (a free port, see {@link TChannelInbound#address()}). */
    public Builder port(int port) {
      if (port < 0 || port > 0xFFFF) {
        throw new IllegalArgumentException("port out of range: " + port);
      }
      this.port = port;
      return this;
    }

    /** The inbound, not started. */
    public TChannelInbound build() {
      return new TChannelInbound(this);
    }
  }
}
