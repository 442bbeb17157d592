package io.yarpc.transport.grpc;

import static java.util.Objects.requireNonNull;

import io.grpc.ManagedChannel;
import io.grpc.netty.InternalNettyChannelBuilder;
import io.grpc.netty.NettyChannelBuilder;
import io.yarpc.internal.Checks;
import io.yarpc.netty.internal.ReloadingSslContext;
import io.yarpc.peer.Peer;
import io.yarpc.peer.PeerChooser;
import io.yarpc.peer.PeerRegistry;
import io.yarpc.peer.PeerSubscriber;
import io.yarpc.peer.PeerTransport;
import io.yarpc.peer.SinglePeerChooser;
import io.yarpc.tls.TlsConfig;
import io.yarpc.transport.AbstractLifecycle;
import io.yarpc.transport.KeepAlive;
import io.yarpc.transport.Transport;
import io.yarpc.transport.grpc.internal.BodyMarshaller;
import io.yarpc.transport.grpc.internal.ClientTlsNegotiator;
import io.yarpc.transport.grpc.internal.GrpcPeer;
import io.yarpc.transport.grpc.internal.ReceiveStats;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The gRPC transport on grpc-java's Netty transport, wire-compatible with yarpc-go's {@code grpc}
 * transport and with plain gRPC clients and servers.
 *
 * <p>It makes {@linkplain #inbound(InetSocketAddress) inbounds} (a gRPC server that serves every path
 * through the dispatcher's router) and {@linkplain #outbound(PeerChooser) outbounds} (unary and stream
 * calls to peers chosen per call), and it is the {@link PeerTransport} of its outbounds' choosers:
 *
 * <pre>{@code
 * GrpcTransport grpc = GrpcTransport.create();
 * GrpcInbound inbound = grpc.inbound(new InetSocketAddress("127.0.0.1", 0));
 * GrpcOutbound users = grpc.singleOutbound("127.0.0.1:5435");
 * Dispatcher dispatcher = Dispatcher.builder("keyvalue")
 *     .inbound(inbound)
 *     .outbound("users", Outbounds.builder().unary(users).stream(users).build())
 *     .build();
 * }</pre>
 *
 * <p><b>Peers.</b> The transport owns one peer per identifier ({@code host:port}) and one grpc-java
 * {@link ManagedChannel} per peer, reference-counted by subscriber: the first {@link #retainPeer} creates
 * the channel and starts connecting, the last {@link #releasePeer} shuts it down (calls in flight finish).
 * A peer's status follows its channel's connectivity. {@link #stop()} shuts down the channels of peers
 * still retained and waits for those still closing, at most the {@linkplain Builder#shutdownTimeout
 * shutdown timeout}, then closes what is left.
 *
 * <p><b>Messages</b> are received without a redundant copy: a received message is handed on as a body
 * with byte access over grpc-java's own buffers, released once its owner is done with it; outgoing bodies
 * write themselves straight into grpc-java's framer. Limits: outbounds receive responses of up to 64 MiB
 * by default ({@link Builder#maxReceiveMessageSize}); inbounds accept requests up to their {@link
 * io.yarpc.transport.InboundLimits#maxRequestSize() InboundLimits.maxRequestSize} (also 64 MiB by
 * default; see {@link GrpcInbound.Builder#limits}); sending is unlimited; exceeding a limit fails the call
 * with {@code resource-exhausted}. gzip-compressed messages are accepted.
 *
 * <p><b>Keepalive</b> is off by default, as in grpc-java; {@link Builder#keepAlive} turns it on for every
 * peer's channel, so that a connection that died silently fails its calls with {@code unavailable} and its
 * peer stops being available within the keepalive time and timeout, instead of at each call's deadline.
 *
 * <p><b>TLS.</b> Outbound connections are plaintext (h2c) unless the transport has a TLS config ({@link
 * Builder#tls}); then every peer's channel uses TLS with it (see there for names, client certificates,
 * rotation and the errors of failed handshakes). Inbounds take their own config ({@link
 * GrpcInbound.Builder#tls(io.yarpc.tls.TlsConfig, io.yarpc.tls.TlsMode)}).
 *
 * <p>Thread-safe.
 */
public final class GrpcTransport extends AbstractLifecycle implements Transport, PeerTransport {
  /** The name calls carry in {@code RequestMeta.transport()}. */
  public static final String NAME = "grpc";

  /** The default largest response message the outbounds receive: 64 MiB, as in yarpc-go. */
  public static final int DEFAULT_MAX_RECEIVE_MESSAGE_SIZE = 64 * 1024 * 1024;

  static final String USER_AGENT = "yarpc-java";

  private final int maxReceiveMessageSize;
  private final int maxSendMessageSize;
  private final Duration shutdownTimeout;
  private final Executor executor;
  private final TlsConfig tls;
  private final KeepAlive keepAlive; // null: off
  private final ReloadingSslContext sslContext; // null without TLS
  private final ReceiveStats receiveStats = new ReceiveStats();
  private final BodyMarshaller marshaller = new BodyMarshaller(receiveStats);

  private final PeerRegistry<GrpcPeer> peers = new PeerRegistry<>(this::newPeer, GrpcPeer::watch);
  private final List<GrpcPeer> closing =
      new ArrayList<>(); // guarded by itself: closed, maybe not terminated
  private boolean stopped; // guarded by closing

  private GrpcTransport(Builder b) {
    this.maxReceiveMessageSize = b.maxReceiveMessageSize;
    this.maxSendMessageSize = b.maxSendMessageSize;
    this.shutdownTimeout = b.shutdownTimeout;
    this.executor = b.executor;
    this.tls = b.tls;
    this.keepAlive = b.keepAlive;
    this.sslContext = b.tls == null ? null : ReloadingSslContext.client(b.tls, List.of("h2"));
  }

  /** A transport with default settings. */
  public static GrpcTransport create() {
    return builder().build();
  }

  /** A builder for a transport. */
  public static Builder builder() {
    return new Builder();
  }

  // ---------------------------------------------------------------------------------------------------
  // Inbounds and outbounds

  /** An inbound listening on {@code address} (port 0 picks a free port) with this transport's settings. */
  public GrpcInbound inbound(InetSocketAddress address) {
    return inboundBuilder(address).build();
  }

  /** An inbound listening on {@code port} of every local interface. */
  public GrpcInbound inbound(int port) {
    return inbound(new InetSocketAddress(port));
  }

  /** A builder for an inbound listening on {@code address}. */
  public GrpcInbound.Builder inboundBuilder(InetSocketAddress address) {
    return new GrpcInbound.Builder(this, requireNonNull(address, "address"));
  }

  /**
   * An outbound whose calls go to the peers {@code chooser} picks; the chooser's peers must come from this
   * transport. The outbound starts and stops the chooser.
   */
  public GrpcOutbound outbound(PeerChooser chooser) {
    return outboundBuilder(chooser).build();
  }

  /** A builder for an outbound using {@code chooser}. */
  public GrpcOutbound.Builder outboundBuilder(PeerChooser chooser) {
    return new GrpcOutbound.Builder(this, requireNonNull(chooser, "chooser"));
  }

  /** An outbound to one address, {@code host:port}. */
  public GrpcOutbound singleOutbound(String hostPort) {
    return outbound(SinglePeerChooser.of(this, requireNonNull(hostPort, "hostPort")));
  }

  // ---------------------------------------------------------------------------------------------------
  // Peers

  /**
   * Retains the peer for {@code identifier} ({@code host:port}, {@code [v6]:port}) on behalf of
   * {@code subscriber}, creating its channel on the first retain.
   *
   * @throws IllegalArgumentException when the identifier is not {@code host:port}
   * @throws IllegalStateException when the transport was stopped
   */
  @Override
  public Peer retainPeer(String identifier, PeerSubscriber subscriber) {
    return peers.retain(identifier, subscriber);
  }

  /**
   * Releases one retain of {@code identifier} by {@code subscriber}; the last release shuts the peer's
   * channel down (calls in flight finish; {@link #stop()} forces what is still open after the shutdown
   * timeout).
   *
   * @throws IllegalArgumentException when {@code subscriber} does not retain that peer
   */
  @Override
  public void releasePeer(String identifier, PeerSubscriber subscriber) {
    peers.release(identifier, subscriber);
  }

  private GrpcPeer newPeer(String identifier) {
    synchronized (closing) {
      if (stopped) {
        throw Checks.notRunning("grpc transport");
      }
    }
    InetSocketAddress address = parse(identifier);
    return new GrpcPeer(
        identifier, address, tlsFailures -> newChannel(address, tlsFailures), this::peerClosed);
  }

  private void peerClosed(GrpcPeer peer) {
    synchronized (closing) {
      closing.removeIf(GrpcPeer::isTerminated);
      closing.add(peer);
    }
  }

  /** {@code host:port} (IPv6 hosts in brackets) as an unresolved address. */
  private static InetSocketAddress parse(String identifier) {
    int colon = identifier.lastIndexOf(':');
    if (colon <= 0 || colon == identifier.length() - 1) {
      throw new IllegalArgumentException(
          "peer identifier must be host:port, got \"" + identifier + "\"");
    }
    String host = identifier.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    int port;
    try {
      port = Integer.parseInt(identifier.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "peer identifier must be host:port, got \"" + identifier + "\"");
    }
    return InetSocketAddress.createUnresolved(host, port);
  }

  private ManagedChannel newChannel(InetSocketAddress address, Consumer<String> tlsFailures) {
    NettyChannelBuilder b =
        NettyChannelBuilder.forAddress(address.getHostString(), address.getPort())
            .disableRetry() // a retried call would stream the (already released) request body again
            .maxInboundMessageSize(maxReceiveMessageSize)
            .userAgent(USER_AGENT);
    if (sslContext == null) {
      b.usePlaintext();
    } else {
      InternalNettyChannelBuilder.setProtocolNegotiatorFactory(
          b, new ClientTlsNegotiator(sslContext, tls.serverName(), tlsFailures));
    }
    if (executor != null) {
      b.executor(executor);
    } else {
      b.directExecutor();
    }
    if (keepAlive != null) {
      b.keepAliveTime(keepAlive.time().toNanos(), TimeUnit.NANOSECONDS)
          .keepAliveTimeout(keepAlive.timeout().toNanos(), TimeUnit.NANOSECONDS)
          .keepAliveWithoutCalls(keepAlive.withoutCalls());
    }
    return b.build();
  }

  // ---------------------------------------------------------------------------------------------------
  // Lifecycle and settings

  @Override
  protected void doStart() {}

  /**
   * Shuts down the channels of the peers still retained and waits, at most the shutdown timeout, for
   * them and for released ones still finishing calls; then forces what is left closed.
   */
  @Override
  protected void doStop() throws InterruptedException {
    synchronized (closing) {
      stopped = true;
    }
    peers.closeAll();
    List<GrpcPeer> remaining;
    synchronized (closing) {
      remaining = new ArrayList<>(closing);
      closing.clear();
    }
    long deadline = System.nanoTime() + shutdownTimeout.toNanos();
    for (GrpcPeer p : remaining) {
      p.awaitTermination(Math.max(0, deadline - System.nanoTime()));
    }
  }

  int maxReceiveMessageSize() {
    return maxReceiveMessageSize;
  }

  int maxSendMessageSize() {
    return maxSendMessageSize;
  }

  Duration shutdownTimeout() {
    return shutdownTimeout;
  }

  /** The keepalive of the peers' channels ({@link Builder#keepAlive}), or null when off. */
  public KeepAlive keepAlive() {
    return keepAlive;
  }

  Executor executor() {
    return executor;
  }

  BodyMarshaller marshaller() {
    return marshaller;
  }

  /** What the transport's inbounds and outbounds did with received messages (tests, diagnostics). */
  ReceiveStats receiveStats() {
    return receiveStats;
  }

  /** The number of peers currently retained (tests, diagnostics). */
  int peerCount() {
    return peers.peers().size();
  }

  @Override
  public String toString() {
    return "GrpcTransport";
  }

  /** Builds a {@link GrpcTransport}; not thread-safe. */
  public static final class Builder {
    private int maxReceiveMessageSize = DEFAULT_MAX_RECEIVE_MESSAGE_SIZE;
    private int maxSendMessageSize = Integer.MAX_VALUE;
    private Duration shutdownTimeout = Duration.ofSeconds(5);
    private Executor executor;
    private TlsConfig tls;
    private KeepAlive keepAlive;

    private Builder() {}

    /**
     * Makes the outbounds' connections TLS with {@code config} (default: plaintext, h2c): they trust its
     * roots (the JDK's when it names none), present its certificate when it has one (mutual TLS), offer
     * ALPN {@code h2}, and send and verify its {@linkplain TlsConfig#serverName() server name}, by default
     * the peer's host (an IP address is checked against the certificate's IP addresses), unless its
     * {@linkplain TlsConfig#hostnameVerification() hostname verification} is off. The {@code :authority}
     * stays the peer's {@code host:port}. New connections use the newest material after {@link
     * TlsConfig#reload()} or a change of its files; open ones keep theirs. A call whose connection cannot
     * be made because of TLS fails with {@code unavailable} and {@code TLS handshake with peer <host:port>
     * failed: <reason>}, and a peer whose handshakes fail gives {@code TLS handshake failed: <reason>} as
     * its {@linkplain io.yarpc.peer.Peer#unavailableReason() unavailable reason} (which a waiting chooser's
     * error names). Null turns TLS off.
     */
    public Builder tls(TlsConfig config) {
      this.tls = config;
      return this;
    }

    /**
     * Keepalive pings on every peer's channel (default: none, as in grpc-java), through grpc-java's own
     * keepalive ({@code keepAliveTime}, {@code keepAliveTimeout}, {@code keepAliveWithoutCalls}), which
     * raises a time under 10 s to 10 s and a timeout under 10 ms to 10 ms. A connection whose ping goes
     * unanswered is closed: its calls fail at once with {@code unavailable} ({@code Keepalive failed. The
     * connection is likely gone}, grpc-java's words), the peer leaves {@link
     * io.yarpc.peer.ConnectionStatus#AVAILABLE} (its channel reconnects, with grpc-java's backoff when the
     * reconnection fails), and peer lists choose other peers meanwhile. Servers must permit the pings: see
     * {@link io.yarpc.transport.InboundLimits.Builder#permitKeepAliveTime} for yarpc-java's inbounds, the
     * same rule as grpc-java's and grpc-go's servers. Null turns it off.
     */
    public Builder keepAlive(KeepAlive keepAlive) {
      this.keepAlive = keepAlive;
      return this;
    }

    /**
     * The largest response message the transport's outbounds receive (default 64 MiB); each outbound may
     * override it. Inbounds take their request limit from their {@link io.yarpc.transport.InboundLimits}
     * ({@link GrpcInbound.Builder#limits}).
     */
    public Builder maxReceiveMessageSize(int bytes) {
      this.maxReceiveMessageSize = positive(bytes, "maxReceiveMessageSize");
      return this;
    }

    /** The largest message inbounds and outbounds send (default unlimited); each may override it. */
    public Builder maxSendMessageSize(int bytes) {
      this.maxSendMessageSize = positive(bytes, "maxSendMessageSize");
      return this;
    }

    /**
     * How long stopping waits for calls in flight before forcing connections closed (default 5 s): for
     * the transport's channels, and the default grace period of its inbounds.
     */
    public Builder shutdownTimeout(Duration timeout) {
      requireNonNull(timeout, "timeout");
      if (timeout.isNegative()) {
        throw new IllegalArgumentException("shutdownTimeout must not be negative: " + timeout);
      }
      this.shutdownTimeout = timeout;
      return this;
    }

    /**
     * The executor grpc-java runs call events on (message arrival, readiness, completion), and so the
     * thread that completes the futures of streams and outbound calls. Default: direct, on Netty's event
     * loop, as the HTTP and TChannel transports do: it saves a thread hop per call on each side (measured
     * at 350 B with 64 in flight: 0.66x of plain grpc-java's calls/s with grpc-java's pool, 1.06x
     * direct). Continuations of outbound futures then run on the event loop and must never block; chain
     * blocking work with the {@code ...Async} methods, or give a pool here.
     */
    public Builder executor(Executor executor) {
      this.executor = requireNonNull(executor, "executor");
      return this;
    }

    /**
     * The transport.
     *
     * @throws IllegalStateException when the {@linkplain #tls TLS} material cannot be read
     */
    public GrpcTransport build() {
      return new GrpcTransport(this);
    }

    static int positive(int value, String name) {
      if (value <= 0) {
        throw new IllegalArgumentException(name + " must be positive, got " + value);
      }
      return value;
    }
  }
}
