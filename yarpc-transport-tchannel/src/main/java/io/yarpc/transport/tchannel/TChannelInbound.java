package io.yarpc.transport.tchannel;

import static java.util.Objects.requireNonNull;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.yarpc.netty.internal.HeapReads;
import io.yarpc.netty.internal.NettyIo;
import io.yarpc.netty.internal.ServerTls;
import io.yarpc.tls.TlsConfig;
import io.yarpc.tls.TlsMode;
import io.yarpc.transport.AbstractLifecycle;
import io.yarpc.transport.DeadlinePolicy;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.InboundLimits;
import io.yarpc.transport.Router;
import io.yarpc.transport.Transport;
import io.yarpc.transport.tchannel.internal.CallCodec;
import io.yarpc.transport.tchannel.internal.Connection;
import io.yarpc.transport.tchannel.internal.ConnectionHost;
import io.yarpc.transport.tchannel.internal.ConnectionLimits;
import io.yarpc.transport.tchannel.internal.FrameDecoder;
import io.yarpc.transport.tchannel.internal.InitFrames;
import io.yarpc.transport.tchannel.internal.PendingBudget;
import io.yarpc.transport.tchannel.internal.Settings;
import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * Serves the dispatcher's unary procedures over TChannel: listens on a TCP address (default {@code
 * 127.0.0.1}, a free port; see {@link #address()}), completes the init handshake with each connecting
 * peer, and turns every call req into a YARPC request for the router (docs/spec/wire-tchannel.md §12.2).
 *
 * <p>Each call: transport {@code tchannel}, the deadline from the ttl as the {@linkplain
 * Builder#deadlinePolicy deadline policy} bounds it (by default a ttl of 0 is answered with a
 * bad-request error frame {@code timeout required}); the handler runs through the dispatcher's handler
 * (which hops to its executor; the event loop never blocks). A successful response is a call res with the
 * response's headers and {@code $rpc$-service} in arg2; an exception carrying an application-error
 * response becomes a call res with code 0x01 and the {@code $rpc$-error-*} keys; any other error an error
 * frame mapped by yarpc-go's table (docs/spec/wire-tchannel.md §12.4). Oneway and streaming procedures are refused
 * as yarpc-go does ({@code unimplemented}, a bad-request error frame). A cancel frame cancels the handler's
 * call.
 *
 * <p><b>Limits.</b> The connections this inbound accepts follow its {@link InboundLimits} ({@link
 * Builder#limits}; connections the transport dials for its outbounds follow the transport's builder
 * instead). What a peer gets for each:
 *
 * <ul>
 *   <li>{@code maxConnections}: a connection accepted beyond it is closed at once, before anything is
 *       read, and counted ({@link #refusedConnections()}).
 *   <li>{@code handshakeTimeout}: a connection without a complete init handshake by then is closed
 *       (with TLS, counted from the accept: the TLS handshake is part of it).
 *   <li>{@code maxConcurrentCallsPerConnection} (default {@value
 *       InboundLimits#DEFAULT_TCHANNEL_CONCURRENT_CALLS_PER_CONNECTION} here: TChannel clients put every
 *       call to a server on one connection): a call req beyond it (calls being received or handled) gets
 *       a busy error frame ({@code resource-exhausted}); the connection stays.
 *   <li>{@code maxRequestSize}: a call whose args grow past it gets a bad-request error frame as soon as
 *       they do (not busy: TChannel clients retry busy on another peer); the rest of its frames are read
 *       and dropped.
 *   <li>{@code maxHeaderBytes}: a call whose arg2 (application headers) grows past it gets a bad-request
 *       error frame as soon as it does, before anything decodes it; {@code maxHeaderCount}: a call with
 *       more transport and application headers together gets a bad-request error frame, found before
 *       the rest of arg2 is decoded (JSON headers are read as a stream). The connection stays.
 *   <li>{@code readTimeout}: a call message still arriving that long after its first frame, or at its
 *       deadline if that comes first, gets a timeout error frame ({@code deadline-exceeded}); what was
 *       received is released and the rest of its frames are dropped. A frame whose own bytes stop
 *       arriving is not a message yet: only {@code idleTimeout} ends its connection.
 *   <li>{@code maxPendingBytesPerConnection}, {@code maxPendingBytes}: the memory held for call messages
 *       that span frames and are still arriving (a socket buffer that held chunks point into counts whole;
 *       a chunk that would pin more than eight times its size is kept as a copy). While the inbound's total
 *       is past its budget, a connection holding such bytes stops reading until messages complete, end or
 *       time out (backpressure, no error), except one connection at a time, which reads on to finish its
 *       oldest message still arriving and then hands the exemption on (also when that message is ended
 *       or times out); it takes the exemption when a frame arrives, so a stalled peer does not take it
 *       when woken. The total may overshoot by about one request and one socket read per connection. The
 *       connection's own budget never stops reading, since all of a connection's calls share one socket:
 *       its oldest message still arriving always goes on (bounded by {@code maxRequestSize}), and a frame
 *       of any other message arriving while those others hold the budget ends that message with a busy
 *       error frame ({@code resource-exhausted}); the connection stays.
 *   <li>{@code writeTimeout}: the connection stops reading while its outbound buffer is over Netty's
 *       high water mark (a peer that does not read what it asked for cannot make it grow); when frames
 *       wait with no progress for this long (checked four times per timeout) the connection is closed
 *       and they are released.
 *   <li>{@code idleTimeout}: a connection with no call in flight (either direction) and no call frame
 *       read or written for this long is closed, after what remains to be written is flushed (TChannel
 *       has no goaway frame; pings do not count as calls).
 *   <li>{@code maxRequestLineLength}, {@code maxRstFramesPerWindow}, {@code maxConnectionAge}, {@code
 *       permitKeepAliveTime}: ignored (HTTP and HTTP/2 only: TChannel has no request line, no stream
 *       resets and no goaway frame; a ping is answered as long as the peer reads the answers).
 * </ul>
 *
 * <p><b>TLS.</b> {@link Builder#tls(TlsConfig)} serves TLS only; {@link Builder#tls(TlsConfig, TlsMode)}
 * also serves plaintext clients on the same port ({@link TlsMode#PERMISSIVE}). TLS wraps the TCP
 * connection before TChannel's init handshake, as in yarpc-go. A plaintext TChannel client of a TLS-only
 * port gets a fatal error frame {@code TLS is required on this port} in answer to its init req, then the
 * connection closes. Each call's {@link io.yarpc.transport.RequestMeta#connection()} tells the remote and
 * local addresses and, over TLS, the session and the client's verified certificate, for authorization
 * middleware.
 *
 * <p>Ownership: the request body (arg3, byte access over the received buffers) belongs to the invocation,
 * which releases it when the handler completes; this inbound owns and releases every response body it
 * writes (also the body of a response attached to an exception). Stopping the inbound closes its listening
 * socket and the connections it accepted.
 */
public final class TChannelInbound extends AbstractLifecycle implements Inbound {
  /** The message of the error frame a plaintext client of an {@link TlsMode#ENFORCED} port gets. */
  static final String TLS_REQUIRED_MESSAGE = "TLS is required on this port";

  private final TChannelTransport transport;
  private final String host;
  private final int port;
  private final InboundLimits limits;
  private final DeadlinePolicy deadlinePolicy;
  private final PendingBudget pendingBudget;
  private final int sendBufferSize;
  private final TlsConfig tlsConfig;
  private final TlsMode tlsMode;
  private final ChannelGroup accepted =
      new DefaultChannelGroup("tchannel-inbound", GlobalEventExecutor.INSTANCE);
  private final AtomicInteger open = new AtomicInteger();
  private final LongAdder refused = new LongAdder();
  private volatile Router router;
  private volatile Channel serverChannel;
  private volatile InetSocketAddress address;
  private volatile String hostPort = InitFrames.EPHEMERAL_HOST_PORT;

  private TChannelInbound(Builder b) {
    this.transport = b.transport;
    this.host = b.host;
    this.port = b.port;
    this.limits = b.limits;
    this.deadlinePolicy = b.deadlinePolicy;
    this.pendingBudget = new PendingBudget(b.limits.maxPendingBytes());
    this.sendBufferSize = b.sendBufferSize;
    this.tlsConfig = b.tlsConfig;
    this.tlsMode = b.tlsConfig == null ? TlsMode.DISABLED : b.tlsMode;
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

  /** The limits on the connections this inbound accepts. */
  public InboundLimits limits() {
    return limits;
  }

  /** What the inbound does with the deadline calls arrive with. */
  public DeadlinePolicy deadlinePolicy() {
    return deadlinePolicy;
  }

  /**
   * Whether connections must, may or cannot be TLS: the mode given to {@link Builder#tls(TlsConfig,
   * TlsMode)}, {@link TlsMode#DISABLED} without a TLS config.
   */
  public TlsMode tlsMode() {
    return tlsMode;
  }

  /**
   * How many connections this inbound closed as soon as it accepted them because it already had {@link
   * InboundLimits#maxConnections()} open.
   */
  public long refusedConnections() {
    return refused.sum();
  }

  /** The address the inbound listens on; null before {@link #start()}. */
  public InetSocketAddress address() {
    return address;
  }

  /** {@link #address()}: null before {@link #start()}; after {@link #stop()}, the address it had. */
  @Override
  public InetSocketAddress listenAddress() {
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
    ServerTls tls =
        ServerTls.create(
            tlsConfig, tlsMode, List.of(), "the tchannel inbound", limits.handshakeTimeout());
    ConnectionHost connectionHost =
        new AcceptedHost(
            settings, ConnectionLimits.accepted(limits, deadlinePolicy, pendingBudget));
    int maxConnections = limits.maxConnections();
    ServerBootstrap b =
        new ServerBootstrap()
            .group(transport.group())
            .channel(NettyIo.get().serverChannel())
            .childOption(ChannelOption.ALLOCATOR, transport.receiveAllocator())
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    if (open.incrementAndGet() > maxConnections) {
                      open.decrementAndGet();
                      refused.increment();
                      ch.close();
                      return;
                    }
                    ch.closeFuture().addListener(f -> open.decrementAndGet());
                    accepted.add(ch);
                    Connection connection = new Connection(false, connectionHost);
                    if (tls.enabled()) {
                      // from the accept: the first byte, the TLS handshake and the init handshake
                      connection.armHandshakeTimer(ch);
                    }
                    HeapReads.install(ch.pipeline(), transport.receiveIntoHeap());
                    tls.install(ch.pipeline(), new Front(settings, connection));
                  }
                });
    if (sendBufferSize > 0) {
      b.childOption(ChannelOption.SO_SNDBUF, sendBufferSize);
    }
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

  /**
   * How many connections this inbound has accepted and not closed; for tests. A connection stops counting
   * when its channel's close future completes, just before its pipeline handles the close: what it held
   * ({@link #pendingBytes}) is given back a moment later.
   */
  int acceptedConnections() {
    return accepted.size();
  }

  /**
   * The bytes all its connections hold for call messages still arriving; for tests. A frame's chunks are
   * charged one by one (arg3 last), so a reader on another thread may see part of a frame's charge.
   */
  long pendingBytes() {
    return pendingBudget.total();
  }

  /** Closes every connection this inbound accepted. */
  void closeConnections() {
    accepted.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
  }

  @Override
  public String toString() {
    return "TChannelInbound{" + (address == null ? host + ":" + port : address) + "}";
  }

  /** Where the TLS front hands a connection on: TChannel's frames, plaintext or over TLS. */
  private static final class Front implements ServerTls.Continuation {
    private final Settings settings;
    private final Connection connection;

    Front(Settings settings, Connection connection) {
      this.settings = settings;
      this.connection = connection;
    }

    @Override
    public void plaintext(ChannelPipeline p) {
      p.addLast(new FrameDecoder(), connection);
    }

    @Override
    public void tls(ChannelPipeline p, SslHandler ssl) {
      p.addLast(new FrameDecoder(), connection);
    }

    /** A plaintext client of an enforced port: its init req gets a fatal error frame. */
    @Override
    public void refusePlaintext(ChannelHandlerContext ctx, ByteBuf firstBytes) {
      ByteBuf answer =
          InitFrames.refusal(settings.writeAllocator(), firstBytes, TLS_REQUIRED_MESSAGE);
      if (answer != null) {
        ctx.write(answer);
      }
    }
  }

  private final class AcceptedHost implements ConnectionHost {
    private final Settings settings;
    private final ConnectionLimits limits;

    AcceptedHost(Settings settings, ConnectionLimits limits) {
      this.settings = settings;
      this.limits = limits;
    }

    @Override
    public Settings settings() {
      return settings;
    }

    @Override
    public ConnectionLimits limits() {
      return limits;
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
    private InboundLimits limits = InboundLimits.defaults();
    private DeadlinePolicy deadlinePolicy = DeadlinePolicy.strict();
    private int sendBufferSize;
    private TlsConfig tlsConfig;
    private TlsMode tlsMode = TlsMode.ENFORCED;

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

    /**
     * The limits on the connections the inbound accepts; default {@link InboundLimits#defaults()}. See
     * the class comment for what a peer gets for each. Connections the transport dials for its outbounds
     * keep the transport's settings ({@link TChannelTransport.Builder#maxInFlightCalls}, {@link
     * TChannelTransport.Builder#maxMessageSize}, {@link TChannelTransport.Builder#handshakeTimeout}),
     * even when the remote side sends calls on them.
     */
    public Builder limits(InboundLimits limits) {
      this.limits = requireNonNull(limits, "limits");
      return this;
    }

    /**
     * What the inbound does with the deadline (ttl) calls arrive with; default {@link
     * DeadlinePolicy#strict()}: a ttl of 0 is answered with a bad-request error frame {@code timeout
     * required}, as yarpc-go does. A policy with a default timeout serves a call with a ttl of 0 with that
     * timeout instead; a policy with a cap brings a further deadline in to the cap (and a call message
     * still arriving ends at the capped deadline).
     */
    public Builder deadlinePolicy(DeadlinePolicy policy) {
      this.deadlinePolicy = requireNonNull(policy, "policy");
      return this;
    }

    /**
     * Serves TLS only ({@link TlsMode#ENFORCED}) with {@code config}'s certificate; see {@link
     * #tls(TlsConfig, TlsMode)}.
     */
    public Builder tls(TlsConfig config) {
      return tls(config, TlsMode.ENFORCED);
    }

    /**
     * TLS for the connections the inbound accepts: the certificate and key the server presents, whether
     * it asks for client certificates ({@link TlsConfig#clientAuth()}) and the roots that verify them.
     * TLS wraps the TCP connection before TChannel's init handshake (no ALPN). The connection's first byte
     * tells a TLS handshake from a plaintext TChannel client, so {@code mode} can be:
     *
     * <ul>
     *   <li>{@link TlsMode#ENFORCED}: TLS only. A plaintext TChannel client's init req is answered with a
     *       fatal protocol error frame (code {@code 0xFF}) {@code TLS is required on this port} and the
     *       connection is closed (a yarpc-java outbound reports it as {@code unavailable} with that
     *       text); a client that sends something else is closed without an answer.
     *   <li>{@link TlsMode#PERMISSIVE}: TLS and plaintext clients on the same port (for moving a fleet to
     *       TLS); plaintext calls carry no verified identity.
     *   <li>{@link TlsMode#DISABLED}: plaintext only; the config is ignored.
     * </ul>
     *
     * <p>A failed TLS handshake (no or an untrusted client certificate when the config requires one, a
     * client that does not trust the server) closes the connection and is logged at most once a second.
     * {@link InboundLimits#handshakeTimeout()} counts from the accept: the first byte, the TLS handshake
     * and the init handshake must all be done within it. Every call's {@link
     * io.yarpc.transport.RequestMeta#connection()} carries the session and the client's verified
     * certificate ({@link io.yarpc.transport.ConnectionInfo#peerSubject()}, {@link
     * io.yarpc.transport.ConnectionInfo#peerSubjectAlternativeNames()}). New connections pick up rotated
     * certificates as {@link TlsConfig} describes; open ones keep their session. Default: no TLS.
     *
     * @throws IllegalArgumentException when {@code mode} is not {@code DISABLED} and the config has no
     *     certificate
     */
    public Builder tls(TlsConfig config, TlsMode mode) {
      requireNonNull(config, "config");
      requireNonNull(mode, "mode");
      if (mode != TlsMode.DISABLED) {
        config.requireCertificate("the tchannel inbound");
      }
      this.tlsConfig = config;
      this.tlsMode = mode;
      return this;
    }

    /**
     * For tests: the kernel send buffer of accepted sockets ({@code SO_SNDBUF}), so that a peer that does
     * not read fills it quickly; default the system's.
     */
    Builder sendBufferSize(int bytes) {
      this.sendBufferSize = bytes;
      return this;
    }

    /** The inbound, not started. */
    public TChannelInbound build() {
      return new TChannelInbound(this);
    }
  }
}
