package io.yarpc.transport.tchannel;

import static java.util.Objects.requireNonNull;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.PreferHeapByteBufAllocator;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.Checks;
import io.yarpc.internal.Futures;
import io.yarpc.netty.internal.ClientTls;
import io.yarpc.netty.internal.Connections;
import io.yarpc.netty.internal.HeapReads;
import io.yarpc.netty.internal.IoErrors;
import io.yarpc.netty.internal.NettyIo;
import io.yarpc.netty.internal.ReloadingSslContext;
import io.yarpc.netty.internal.TlsErrors;
import io.yarpc.peer.Peer;
import io.yarpc.peer.PeerChooser;
import io.yarpc.peer.PeerRegistry;
import io.yarpc.peer.PeerSubscriber;
import io.yarpc.peer.PeerTransport;
import io.yarpc.peer.SinglePeerChooser;
import io.yarpc.tls.TlsConfig;
import io.yarpc.transport.AbstractLifecycle;
import io.yarpc.transport.KeepAlive;
import io.yarpc.transport.Router;
import io.yarpc.transport.Transport;
import io.yarpc.transport.tchannel.internal.ClaimedHostPort;
import io.yarpc.transport.tchannel.internal.Connection;
import io.yarpc.transport.tchannel.internal.ConnectionHost;
import io.yarpc.transport.tchannel.internal.ConnectionLimits;
import io.yarpc.transport.tchannel.internal.FrameDecoder;
import io.yarpc.transport.tchannel.internal.Frames;
import io.yarpc.transport.tchannel.internal.InitFrames;
import io.yarpc.transport.tchannel.internal.Settings;
import io.yarpc.transport.tchannel.internal.TChannelPeer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The YARPC raw-TCP transport: TChannel protocol v2 on Netty, wire-compatible with tchannel-node,
 * tchannel-go and yarpc-go's {@code transport/tchannel}. Unary calls only, as in yarpc-go.
 *
 * <pre>{@code
 * TChannelTransport tchannel = TChannelTransport.builder().serviceName("keyvalue").build();
 * TChannelInbound inbound = tchannel.inbound();                       // 127.0.0.1, a free port
 * TChannelOutbound users = tchannel.singleOutbound("127.0.0.1:4040"); // one peer
 * TChannelOutbound orders = tchannel.outbound(RoundRobinPeerList.builder(tchannel).peers(addrs).build());
 * Dispatcher dispatcher = Dispatcher.builder("keyvalue").inbound(inbound)
 *     .outbound("users", Outbounds.unary(users)).build();
 * }</pre>
 *
 * <p><b>What it owns.</b> The event loops all its inbounds and outbounds run on, and the peers: as a
 * {@link PeerTransport} it creates one peer per {@code host:port} on the first {@link #retainPeer retain},
 * counts retains per subscriber, and closes the peer on the last {@link #releasePeer release}. Each peer
 * holds <em>one</em> connection, multiplexed by message id and reopened with backoff while the peer is
 * retained; a peer that dies fails its pending calls with {@code unavailable} at once. Connections work in
 * both directions: calls the remote side sends on a connection this side dialled are served by this
 * transport's (first running) inbound, and a connection an inbound accepted from a process that advertised
 * its listening {@code host:port} serves as the peer connection for that address when the peer has none,
 * provided the claim is backed: the connection comes from that host's IP address, or its client
 * certificate, verified by the inbound's TLS, has a subject alternative name for that host (IP or DNS;
 * host names are never resolved for this). With {@link Builder#tls TLS} on this transport only the
 * certificate counts, so calls never leave on a plaintext connection. A connection whose claim is not
 * backed still serves the remote side's calls; this side's calls to that address dial their own. Peer
 * choosers only choose.
 *
 * <p><b>TLS.</b> {@link Builder#tls} makes every connection this transport dials TLS (mutual when the
 * config has a certificate); inbounds take their own config ({@link TChannelInbound.Builder#tls}). Calls
 * the remote side sends on a connection this side dialled carry that connection's {@link
 * io.yarpc.transport.ConnectionInfo} too, whose certificate is then the server's.
 *
 * <p><b>Lifecycle.</b> Started by the dispatcher before its inbounds and outbounds and stopped after them
 * (they list it in {@code transports()}); starting an inbound or outbound also starts the transport if
 * needed, but only {@link #stop()} stops it: it closes every connection and shuts the event loops down.
 *
 * <p><b>Limits.</b> A connection an inbound accepted follows that inbound's limits ({@link
 * TChannelInbound.Builder#limits}). A connection this transport dialled for a peer follows this builder:
 * calls the remote side sends on it are held to {@link Builder#maxInFlightCalls} and {@link
 * Builder#maxMessageSize}, to the default header limits of {@link io.yarpc.transport.InboundLimits}, and a
 * call message still arriving at its ttl or after the default read timeout (60 s) ends with a timeout
 * error frame; the connection-level limits (idle and write timeouts, stopping to read under
 * backpressure) do not apply to it: its peer manages it.
 *
 * <p><b>Memory.</b> By default connections receive into pooled <em>heap</em> buffers (see {@link
 * Builder#receiveIntoHeap}): received arg3 bodies are byte access over arrays, parsed in place with no
 * copy. Frames this side sends are written into pooled direct buffers, with arg3 referenced from the
 * body's own memory where the body has byte access.
 */
public final class TChannelTransport extends AbstractLifecycle implements Transport, PeerTransport {
  private static final org.slf4j.Logger log =
      org.slf4j.LoggerFactory.getLogger(TChannelTransport.class);

  private final Builder config;
  private final Settings settings;
  private final ConnectionLimits dialledLimits;
  private final ByteBufAllocator receiveAllocator;
  private final Map<String, Connection> acceptedByHostPort = new ConcurrentHashMap<>();
  private final List<TChannelInbound> runningInbounds = new CopyOnWriteArrayList<>();
  private final ConnectionHost dialledHost = new DialledHost();
  private final TChannelPeer.Host peerHost = new PeerHost();
  private final PeerRegistry<TChannelPeer> peers =
      new PeerRegistry<>(id -> new TChannelPeer(id, peerHost), this::startRetainedPeer);
  private volatile EventLoopGroup group;
  private volatile Bootstrap bootstrap;
  private volatile ReloadingSslContext clientTls; // null without TLS
  private volatile boolean running;

  private TChannelTransport(Builder b) {
    this.config = b;
    ByteBufAllocator base = b.allocator != null ? b.allocator : PooledByteBufAllocator.DEFAULT;
    this.receiveAllocator = b.receiveIntoHeap ? new PreferHeapByteBufAllocator(base) : base;
    this.settings = new Settings(b.processName, base, b.maxMessageSize, b.maxFrameSize);
    this.dialledLimits =
        ConnectionLimits.dialled(
            b.maxInFlightCalls, b.maxMessageSize, b.handshakeTimeout.toNanos());
  }

  /** A builder; {@link Builder#serviceName} is required. */
  public static Builder builder() {
    return new Builder();
  }

  /** A transport for the service {@code serviceName} with the defaults. */
  public static TChannelTransport of(String serviceName) {
    return builder().serviceName(serviceName).build();
  }

  /** The name of the service this transport belongs to. */
  public String serviceName() {
    return config.serviceName;
  }

  /** The keepalive of the connections it dials ({@link Builder#keepAlive}), or null when off. */
  public KeepAlive keepAlive() {
    return config.keepAlive;
  }

  /** An inbound on {@code 127.0.0.1}, on a free port. */
  public TChannelInbound inbound() {
    return inboundBuilder().build();
  }

  /** A builder for an inbound of this transport. */
  public TChannelInbound.Builder inboundBuilder() {
    return new TChannelInbound.Builder(this);
  }

  /** An outbound that calls the peers {@code chooser} chooses (the outbound starts and stops it). */
  public TChannelOutbound outbound(PeerChooser chooser) {
    return outboundBuilder(chooser).build();
  }

  /** A builder for an outbound that calls the peers {@code chooser} chooses. */
  public TChannelOutbound.Builder outboundBuilder(PeerChooser chooser) {
    return new TChannelOutbound.Builder(this, requireNonNull(chooser, "chooser"));
  }

  /** An outbound to the one peer {@code address} ({@code host:port}). */
  public TChannelOutbound singleOutbound(String address) {
    return singleOutboundBuilder(address).build();
  }

  /** A builder for an outbound to the one peer {@code address} ({@code host:port}). */
  public TChannelOutbound.Builder singleOutboundBuilder(String address) {
    requireNonNull(address, "address");
    return outboundBuilder(SinglePeerChooser.of(this, address));
  }

  // ---------------------------------------------------------------------------------------------------
  // Lifecycle

  @Override
  protected void doStart() {
    // first: a TLS config whose material cannot be read fails the start before any thread exists
    clientTls = config.tls == null ? null : ReloadingSslContext.client(config.tls, List.of());
    EventLoopGroup g =
        NettyIo.get()
            .newGroup(config.eventLoopThreads, new DefaultThreadFactory("yarpc-tchannel", true));
    group = g;
    bootstrap =
        new Bootstrap()
            .group(g)
            .channel(NettyIo.get().socketChannel())
            .option(ChannelOption.ALLOCATOR, receiveAllocator)
            .option(ChannelOption.TCP_NODELAY, true)
            .option(
                ChannelOption.CONNECT_TIMEOUT_MILLIS,
                (int) Math.min(Integer.MAX_VALUE, Math.max(1, config.connectTimeout.toMillis())));
    running = true;
    for (TChannelPeer p : peers.peers()) {
      p.start();
    }
  }

  @Override
  protected void doStop() {
    running = false;
    for (TChannelPeer p : peers.peers()) {
      p.close();
    }
    for (TChannelInbound in : runningInbounds) {
      in.closeConnections();
    }
    EventLoopGroup g = group;
    if (g != null) {
      g.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
    }
  }

  // ---------------------------------------------------------------------------------------------------
  // Peers

  /**
   * Retains the peer {@code identifier} ({@code host:port}) for {@code subscriber}, creating it on the
   * first retain; while the transport runs, a new peer starts connecting at once.
   */
  @Override
  public Peer retainPeer(String identifier, PeerSubscriber subscriber) {
    return peers.retain(identifier, subscriber);
  }

  /** A peer's first retain: while the transport runs, it connects (or adopts an accepted connection). */
  private void startRetainedPeer(TChannelPeer peer) {
    if (running) {
      Connection accepted = acceptedByHostPort.get(peer.identifier());
      if (accepted != null) {
        peer.offer(accepted);
      }
      peer.start();
    }
  }

  /** Releases one retain of {@code identifier} by {@code subscriber}; the last release closes the peer. */
  @Override
  public void releasePeer(String identifier, PeerSubscriber subscriber) {
    peers.release(identifier, subscriber);
  }

  /** The retained peer for {@code identifier}, or null; for tests. */
  TChannelPeer peer(String identifier) {
    return peers.get(identifier);
  }

  /** Whether this transport made {@code peer} (retained now, or released since it was chosen). */
  boolean owns(Peer peer) {
    return peer instanceof TChannelPeer && ((TChannelPeer) peer).belongsTo(peerHost);
  }

  // ---------------------------------------------------------------------------------------------------
  // For inbounds and outbounds

  EventLoopGroup group() {
    EventLoopGroup g = group;
    if (g == null || !running) {
      throw YarpcException.of(Code.UNAVAILABLE, "the tchannel transport is not running");
    }
    return g;
  }

  Settings settings() {
    return settings;
  }

  ByteBufAllocator receiveAllocator() {
    return receiveAllocator;
  }

  boolean receiveIntoHeap() {
    return config.receiveIntoHeap;
  }

  void inboundStarted(TChannelInbound inbound) {
    runningInbounds.add(inbound);
  }

  void inboundStopped(TChannelInbound inbound) {
    runningInbounds.remove(inbound);
  }

  /**
   * An accepted connection advertised {@code host_port}: it may serve as that peer's connection when its
   * remote address or its verified certificate backs the claim ({@link ClaimedHostPort}).
   */
  void acceptedHandshake(Connection c) {
    String hostPort = c.remoteHostPort();
    if (hostPort.isEmpty() || hostPort.equals(InitFrames.EPHEMERAL_HOST_PORT)) {
      return;
    }
    if (!ClaimedHostPort.isBacked(hostPort, Connections.info(c.channel()), config.tls != null)) {
      log.debug(
          "{}: advertised host_port {} is backed by neither its address nor a verified"
              + " certificate; outbounds to {} will not use the connection",
          c,
          hostPort,
          hostPort);
      return;
    }
    acceptedByHostPort.put(hostPort, c);
    TChannelPeer peer = peers.get(hostPort);
    if (peer != null) {
      peer.offer(c);
    }
  }

  void acceptedClosed(Connection c) {
    acceptedByHostPort.remove(c.remoteHostPort(), c);
  }

  /** The router for calls arriving on connections this side dialled: the first running inbound's. */
  private Router defaultRouter() {
    for (TChannelInbound in : runningInbounds) {
      Router r = in.router();
      if (r != null) {
        return r;
      }
    }
    return null;
  }

  /** The {@code host_port} to advertise on dialled connections: the first running inbound's, if any. */
  private String localHostPort() {
    for (TChannelInbound in : runningInbounds) {
      return in.hostPort();
    }
    return InitFrames.EPHEMERAL_HOST_PORT;
  }

  private CompletableFuture<Connection> dial(String identifier) {
    int colon = identifier.lastIndexOf(':');
    int port;
    try {
      port = Integer.parseInt(identifier.substring(colon + 1));
      if (colon <= 0 || port <= 0 || port > 0xFFFF) {
        throw new NumberFormatException();
      }
    } catch (NumberFormatException e) {
      return CompletableFuture.failedFuture(
          YarpcException.of(
              Code.UNAVAILABLE,
              "invalid tchannel peer address \"%s\": expected host:port",
              identifier));
    }
    String hostName = identifier.substring(0, colon);
    if (hostName.startsWith("[") && hostName.endsWith("]")) {
      hostName = hostName.substring(1, hostName.length() - 1);
    }
    Bootstrap b = bootstrap;
    if (b == null || !running) {
      return CompletableFuture.failedFuture(
          YarpcException.of(Code.UNAVAILABLE, "the tchannel transport is not running"));
    }
    Connection connection = new Connection(true, dialledHost);
    CompletableFuture<Connection> result = new CompletableFuture<>();
    ReloadingSslContext tls = clientTls;
    AtomicReference<SslHandler> ssl = new AtomicReference<>();
    String host = hostName;
    ChannelFuture connect;
    try {
      connect =
          b.clone()
              .handler(
                  new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                      HeapReads.install(ch.pipeline(), config.receiveIntoHeap);
                      if (tls != null) {
                        // init req waits in the TLS handler until the TLS handshake is done; the
                        // connection's handshake timer counts from the connect, so it covers both
                        SslHandler h =
                            ClientTls.handler(
                                tls, ch.alloc(), host, port, config.handshakeTimeout.toMillis());
                        ssl.set(h);
                        ch.pipeline().addLast(h);
                      }
                      ch.pipeline().addLast(new FrameDecoder(), connection);
                    }
                  })
              .connect(hostName, port);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(
          YarpcException.withCause(
              Code.UNAVAILABLE,
              "cannot connect to tchannel peer " + identifier + ": " + IoErrors.describe(e),
              e));
    }
    connect.addListener(
        f -> {
          if (!f.isSuccess()) {
            result.completeExceptionally(
                YarpcException.withCause(
                    Code.UNAVAILABLE,
                    "cannot connect to tchannel peer "
                        + identifier
                        + ": "
                        + IoErrors.describe(f.cause()),
                    f.cause()));
          }
        });
    connection
        .handshakeFuture()
        .whenComplete(
            (c, e) -> {
              if (e == null) {
                if (!result.complete(c)) {
                  c.close(); // the dial already ended otherwise: nobody would ever use or close
                  // this connection
                }
              } else {
                Throwable cause = Futures.unwrap(e);
                Throwable tlsFailure = tlsFailure(ssl.get(), connection);
                result.completeExceptionally(
                    tlsFailure != null
                        ? TlsErrors.handshakeFailure(identifier, tlsFailure)
                        : cause instanceof YarpcException
                            ? cause
                            : YarpcException.withCause(
                                Code.UNAVAILABLE,
                                "tchannel handshake with "
                                    + identifier
                                    + " failed: "
                                    + IoErrors.describe(cause),
                                cause));
                connect.channel().close();
              }
            });
    return result;
  }

  /** Why the TLS handshake of a dialled connection failed, or null when TLS did not fail. */
  private static Throwable tlsFailure(SslHandler ssl, Connection connection) {
    if (ssl == null) {
      return null;
    }
    io.netty.util.concurrent.Future<?> handshake = ssl.handshakeFuture();
    if (handshake.isDone() && !handshake.isSuccess()) {
      return handshake.cause();
    }
    return connection.tlsFailure(); // refused after this side's part of the handshake was done
  }

  @Override
  public String toString() {
    return "TChannelTransport{" + config.serviceName + "}";
  }

  /** Connections this side dialled for its peers. */
  private final class DialledHost implements ConnectionHost {
    @Override
    public Settings settings() {
      return settings;
    }

    @Override
    public ConnectionLimits limits() {
      return dialledLimits;
    }

    @Override
    public Router router() {
      return defaultRouter();
    }

    @Override
    public String localHostPort() {
      return TChannelTransport.this.localHostPort();
    }

    @Override
    public KeepAlive keepAlive() {
      return config.keepAlive;
    }
  }

  private final class PeerHost implements TChannelPeer.Host {
    @Override
    public CompletableFuture<Connection> dial(String identifier) {
      return TChannelTransport.this.dial(identifier);
    }

    @Override
    public boolean isRunning() {
      return running;
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable task, long nanos) {
      return group().schedule(task, nanos, TimeUnit.NANOSECONDS);
    }
  }

  /** Builds a {@link TChannelTransport}; not thread-safe. */
  public static final class Builder {
    private String serviceName;
    private String processName = "java[" + ProcessHandle.current().pid() + "]";
    private int eventLoopThreads =
        Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors()));
    private Duration connectTimeout = Duration.ofSeconds(2);
    private Duration handshakeTimeout = Duration.ofSeconds(5);
    private long maxMessageSize = 16L * 1024 * 1024;
    private int maxInFlightCalls = 4096;
    private boolean receiveIntoHeap = true;
    private ByteBufAllocator allocator;
    private int maxFrameSize = Frames.MAX_FRAME_SIZE;
    private TlsConfig tls;
    private KeepAlive keepAlive;

    private Builder() {}

    /** The name of this process's service (required), as in yarpc-go's {@code ServiceName} option. */
    public Builder serviceName(String serviceName) {
      requireNonNull(serviceName, "serviceName");
      if (serviceName.isEmpty()) {
        throw new IllegalArgumentException("serviceName must not be empty");
      }
      this.serviceName = serviceName;
      return this;
    }

    /** The {@code process_name} init header; default {@code java[<pid>]}. */
    public Builder processName(String processName) {
      this.processName = requireNonNull(processName, "processName");
      return this;
    }

    /** Event loop threads for all connections; default the number of processors, at most 4. */
    public Builder eventLoopThreads(int threads) {
      if (threads <= 0) {
        throw new IllegalArgumentException("eventLoopThreads must be positive: " + threads);
      }
      this.eventLoopThreads = threads;
      return this;
    }

    /** How long a TCP connect to a peer may take; default 2 s. */
    public Builder connectTimeout(Duration timeout) {
      this.connectTimeout = Checks.positive(timeout, "connectTimeout");
      return this;
    }

    /**
     * How long a connection this transport dials may take to complete the init handshake (with {@link
     * #tls TLS}, the TLS handshake before it included), counted from the TCP connect; default 5 s.
     * (Connections an inbound accepts follow its {@link io.yarpc.transport.InboundLimits#handshakeTimeout}.)
     */
    public Builder handshakeTimeout(Duration timeout) {
      this.handshakeTimeout = Checks.positive(timeout, "handshakeTimeout");
      return this;
    }

    /**
     * The most arg bytes (procedure, headers and body together) one received call res message may carry,
     * and one call req message arriving on a connection this transport dialled, reassembled across
     * frames; default 16 MiB. A larger response fails the call with {@code resource-exhausted}, a larger
     * request is answered with a bad-request error frame (not busy, which TChannel clients retry on
     * another peer); neither is buffered.
     * (Requests on connections an inbound accepted follow its {@link
     * io.yarpc.transport.InboundLimits#maxRequestSize}.)
     */
    public Builder maxMessageSize(long bytes) {
      if (bytes <= 0) {
        throw new IllegalArgumentException("maxMessageSize must be positive: " + bytes);
      }
      this.maxMessageSize = bytes;
      return this;
    }

    /**
     * The most calls one connection this transport dialled may have in flight from the remote side (being
     * received or handled); beyond it calls are answered with a busy error frame. Default 4096.
     * (Connections an inbound accepted follow its {@link
     * io.yarpc.transport.InboundLimits#maxConcurrentCallsPerConnection}.)
     */
    public Builder maxInFlightCalls(int calls) {
      if (calls <= 0) {
        throw new IllegalArgumentException("maxInFlightCalls must be positive: " + calls);
      }
      this.maxInFlightCalls = calls;
      return this;
    }

    /**
     * Whether connections read the socket into pooled heap buffers (default true), so that received
     * bodies expose arrays for in-place parsing; false reads into direct buffers (byte access is then
     * read-only direct views, which protobuf, for one, copies once). Under native I/O (epoll, io_uring),
     * whose reads always land in direct memory, heap receiving copies each read into a heap buffer: the
     * copy NIO's socket read makes inside the JDK.
     */
    public Builder receiveIntoHeap(boolean receiveIntoHeap) {
      this.receiveIntoHeap = receiveIntoHeap;
      return this;
    }

    /**
     * TLS for every connection this transport dials (no ALPN): the server's certificate is verified
     * against {@code config}'s trusted roots (default: the JDK's) and, unless {@link
     * TlsConfig#hostnameVerification()} is off, against the peer's host (the {@code host} of its {@code
     * host:port}) or {@link TlsConfig#serverName()}, which is also sent as SNI; the config's certificate, if
     * it has one, is presented for mutual TLS. The TLS handshake happens before TChannel's init handshake
     * and both must be done within {@link #handshakeTimeout}.
     *
     * <p>A failed TLS handshake (an expired, untrusted or misnamed server certificate, a server that
     * refused this side's certificate, a plaintext server) fails the calls waiting for the connection
     * with {@code unavailable} {@code TLS handshake with peer HOST:PORT failed: REASON}; the peer is
     * unavailable, its {@link io.yarpc.peer.Peer#unavailableReason()} says the same, and it keeps
     * redialling with backoff like after a connect failure. New connections pick up rotated client
     * certificates as {@link TlsConfig} describes. With TLS, a connection the remote side dialled is used
     * for calls to the {@code host:port} it advertised only when its verified client certificate names
     * that host (see the class comment). Default: plaintext.
     */
    public Builder tls(TlsConfig config) {
      this.tls = requireNonNull(config, "config");
      return this;
    }

    /**
     * Keepalive pings on the connections this transport dials for its peers (default: none, as
     * tchannel-go's health checks are off by default): after {@link KeepAlive#time()} with nothing read,
     * a {@code ping req}; when nothing arrives within {@link KeepAlive#timeout()}, the connection is
     * closed, its pending calls fail at once with {@code unavailable} {@code tchannel connection to
     * HOST:PORT closed: no answer to a keepalive ping within TIMEOUT}, and its peer is unavailable (with
     * that reason) until it redials, with its usual backoff (10 ms doubling up to 1 s; a dial must also
     * complete its handshake within {@link #handshakeTimeout}). Connections an inbound accepted are not
     * pinged (their peer does that) but answer pings. Null turns it off.
     */
    public Builder keepAlive(KeepAlive keepAlive) {
      this.keepAlive = keepAlive;
      return this;
    }

    /** For tests: the allocator behind every buffer (default the pooled one). */
    Builder allocator(ByteBufAllocator allocator) {
      this.allocator = requireNonNull(allocator, "allocator");
      return this;
    }

    /** For tests: the largest frame written (the protocol's 65,535 by default). */
    Builder maxFrameSize(int bytes) {
      if (bytes < 256 || bytes > Frames.MAX_FRAME_SIZE) {
        throw new IllegalArgumentException("maxFrameSize must be within 256..65535: " + bytes);
      }
      this.maxFrameSize = bytes;
      return this;
    }

    /** The transport, not started. @throws IllegalStateException when no service name was set */
    public TChannelTransport build() {
      if (serviceName == null) {
        throw new IllegalStateException("a tchannel transport needs a serviceName");
      }
      return new TChannelTransport(this);
    }
  }
}
