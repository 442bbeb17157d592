package io.yarpc.transport.http;

import static java.util.Objects.requireNonNull;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.PreferHeapByteBufAllocator;
import io.netty.channel.socket.ServerSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.yarpc.internal.Checks;
import io.yarpc.netty.internal.NettyIo;
import io.yarpc.peer.Peer;
import io.yarpc.peer.PeerChooser;
import io.yarpc.peer.PeerRegistry;
import io.yarpc.peer.PeerSubscriber;
import io.yarpc.peer.PeerTransport;
import io.yarpc.retry.Backoff;
import io.yarpc.tls.TlsConfig;
import io.yarpc.transport.AbstractLifecycle;
import io.yarpc.transport.KeepAlive;
import io.yarpc.transport.Transport;
import io.yarpc.transport.http.internal.ClientContext;
import io.yarpc.transport.http.internal.HttpPeer;
import io.yarpc.transport.http.internal.OutboundTls;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The YARPC HTTP transport: HTTP/1.1 and h2c (HTTP/2 over cleartext, prior knowledge), and both over TLS,
 * wire-compatible with yarpc-go's {@code transport/http}, on Netty.
 *
 * <pre>{@code
 * HttpTransport http = HttpTransport.builder().build();
 * HttpInbound inbound = http.inbound();                        // 127.0.0.1, any free port
 * HttpOutbound users = http.singleOutbound("127.0.0.1:8080");  // one peer
 * HttpOutbound orders = http.outbound(RoundRobinPeerList.builder(http).peers(addresses).build());
 * Dispatcher dispatcher = Dispatcher.builder("keyvalue").inbound(inbound)
 *     .outbound("users", Outbounds.builder().unary(users).oneway(users).build()).build();
 * }</pre>
 *
 * <p><b>What it owns.</b> The event loops every inbound and outbound of this transport runs on, and the
 * peers: as a {@link PeerTransport} it creates one peer per {@code host:port} on the first
 * {@link #retainPeer retain}, counts retains per subscriber, and closes the peer (its keep-alive HTTP/1.1
 * connections and its h2c connection) on the last {@link #releasePeer release}, letting the calls in
 * flight on it finish (and an HTTP/1.1 call that chose the peer just before sends all the same). Peer
 * choosers only choose among them.
 *
 * <p><b>TLS.</b> A peer named {@code https://host:port} (a URL given to {@link #singleOutbound}, or an
 * identifier a peer list retains) is called over TLS; {@code host:port} and {@code http://host:port} stay
 * plaintext, and the two are different peers even at one address. HTTP/1.1 goes over TLS with ALPN {@code
 * http/1.1}, HTTP/2 ({@link HttpOutbound.Builder#http2}) with ALPN {@code h2}, which the server must choose.
 * {@link Builder#tls} gives the client side's settings (trust roots, a client certificate for mutual TLS,
 * the server name); without it the JDK's trust store verifies servers, with hostname verification. A
 * failed handshake fails the call with {@code unavailable} and the reason ({@code TLS handshake with peer
 * https://10.0.0.1:443 failed: the certificate has expired (...)}) and sends the peer back to connecting,
 * as a failed connect does; its probe stays a TCP connect (with {@link Builder#keepAlive keepalive}, an
 * {@code OPTIONS *} question). Inbounds take their own config ({@link
 * HttpInbound.Builder#tls}).
 *
 * <p><b>Lifecycle.</b> Started by the dispatcher before its inbounds and outbounds and stopped after them
 * (they list it in {@code transports()}); starting an inbound or outbound also starts the transport if
 * needed, but only {@link #stop()} stops it: it closes every peer and shuts the event loops down.
 *
 * <p><b>Memory.</b> By default connections receive into pooled <em>heap</em> buffers: received request
 * and response bodies are offered to encodings as byte access over arrays (parsed in place, no copy),
 * at the cost of one copy inside the JDK's socket read; see {@link Builder#receiveIntoHeap}. Bodies the
 * transport sends are written into pooled direct buffers. Under native I/O (epoll, io_uring), which always
 * reads into direct memory, each read is copied into a heap buffer first: the copy NIO makes in the JDK.
 * Plaintext HTTP/2 (h2c) is the exception: it copies each DATA frame into its stream's own heap buffers
 * anyway, so its native reads stay direct and each received body byte is copied into heap once.
 */
public final class HttpTransport extends AbstractLifecycle implements Transport, PeerTransport {
  private final Builder config;
  private final ByteBufAllocator writeAllocator;
  private final ByteBufAllocator receiveAllocator;
  private final PeerRegistry<HttpPeer> peers;
  private volatile EventLoopGroup group;
  private volatile ClientContext clientContext;
  private volatile boolean running;

  private HttpTransport(Builder b) {
    this.config = b;
    this.writeAllocator = b.allocator;
    this.receiveAllocator =
        b.receiveIntoHeap ? new PreferHeapByteBufAllocator(b.allocator) : b.allocator;
    this.peers =
        new PeerRegistry<>(
            id -> new HttpPeer(id, this::clientContext, b.keepAlive),
            peer -> {
              if (running) {
                peer.startProbing();
              }
            });
  }

  /** A builder with the defaults. */
  public static Builder builder() {
    return new Builder();
  }

  /** A transport with the defaults. */
  public static HttpTransport create() {
    return builder().build();
  }

  /** An inbound on {@code 127.0.0.1}, on a free port, with the default limits. */
  public HttpInbound inbound() {
    return inboundBuilder().build();
  }

  /** A builder for an inbound of this transport. */
  public HttpInbound.Builder inboundBuilder() {
    return new HttpInbound.Builder(this);
  }

  /** An HTTP/1.1 outbound that calls the peers {@code chooser} chooses (the outbound starts and stops it). */
  public HttpOutbound outbound(PeerChooser chooser) {
    return outboundBuilder(chooser).build();
  }

  /** A builder for an outbound that calls the peers {@code chooser} chooses. */
  public HttpOutbound.Builder outboundBuilder(PeerChooser chooser) {
    return new HttpOutbound.Builder(this, requireNonNull(chooser, "chooser"));
  }

  /**
   * An HTTP/1.1 outbound to one peer: {@code host:port}, or a URL {@code http://host:port/path} or {@code
   * https://host:port/path} (TLS) whose path the requests use.
   */
  public HttpOutbound singleOutbound(String address) {
    return singleOutboundBuilder(address).build();
  }

  /** A builder for an outbound to one peer; see {@link #singleOutbound(String)}. */
  public HttpOutbound.Builder singleOutboundBuilder(String address) {
    return HttpOutbound.Builder.single(this, requireNonNull(address, "address"));
  }

  // ---------------------------------------------------------------------------------------------------
  // Lifecycle

  @Override
  protected void doStart() {
    OutboundTls tls = new OutboundTls(config.tls); // first: unreadable material fails the start
    EventLoopGroup g =
        NettyIo.get()
            .newGroup(config.eventLoopThreads, new DefaultThreadFactory("yarpc-http", true));
    group = g;
    clientContext =
        new ClientContext(
            g,
            NettyIo.get().socketChannel(),
            receiveAllocator,
            config.receiveIntoHeap,
            (int) Math.min(Integer.MAX_VALUE, config.connectTimeout.toMillis()),
            config.maxIdleConnectionsPerPeer,
            config.idleConnectionTimeout.toNanos(),
            config.maxResponseHeaderSize,
            (int) Math.min(Integer.MAX_VALUE, config.probeTimeout.toMillis()),
            config.probeBackoff,
            tls);
    running = true;
    for (HttpPeer p : peers.peers()) {
      p.startProbing();
    }
  }

  @Override
  protected void doStop() {
    running = false;
    for (HttpPeer p : peers.peers()) {
      p.close();
    }
    EventLoopGroup g = group;
    if (g != null) {
      g.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
    }
  }

  // ---------------------------------------------------------------------------------------------------
  // Peers

  /**
   * Retains the peer {@code identifier} ({@code host:port} or {@code http://host:port}, plaintext, or
   * {@code https://host:port}, TLS) for {@code subscriber}, creating it on the first retain; once the
   * transport runs, the peer probes its address to report its status.
   */
  @Override
  public Peer retainPeer(String identifier, PeerSubscriber subscriber) {
    return peers.retain(identifier, subscriber);
  }

  /** Releases one retain of {@code identifier} by {@code subscriber}; the last release closes the peer. */
  @Override
  public void releasePeer(String identifier, PeerSubscriber subscriber) {
    peers.release(identifier, subscriber);
  }

  /** The keepalive of the connections to the peers ({@link Builder#keepAlive}), or null when off. */
  public KeepAlive keepAlive() {
    return config.keepAlive;
  }

  /** The peers currently retained, for introspection. */
  public List<Peer> peers() {
    return List.copyOf(peers.peers());
  }

  private ClientContext clientContext() {
    return running ? clientContext : null;
  }

  HttpPeer runningPeer(Peer peer) {
    if (!(peer instanceof HttpPeer)) {
      throw new IllegalArgumentException("peer " + peer + " does not belong to an HTTP transport");
    }
    return (HttpPeer) peer;
  }

  EventLoopGroup group() {
    EventLoopGroup g = group;
    if (g == null || !running) {
      throw Checks.notRunning("HTTP transport");
    }
    return g;
  }

  Class<? extends ServerSocketChannel> serverChannelClass() {
    return NettyIo.get().serverChannel();
  }

  ByteBufAllocator receiveAllocator() {
    return receiveAllocator;
  }

  boolean receiveIntoHeap() {
    return config.receiveIntoHeap;
  }

  ByteBufAllocator writeAllocator() {
    return writeAllocator;
  }

  @Override
  public String toString() {
    return "HttpTransport";
  }

  /** Builds an {@link HttpTransport}; not thread-safe. */
  public static final class Builder {
    private int eventLoopThreads;
    private boolean receiveIntoHeap = true;
    private ByteBufAllocator allocator = PooledByteBufAllocator.DEFAULT;
    private Duration connectTimeout = Duration.ofSeconds(30);
    private int maxIdleConnectionsPerPeer = 16;
    private Duration idleConnectionTimeout = Duration.ofMinutes(15);
    private int maxResponseHeaderSize = 1 << 20;
    private Duration probeTimeout = Duration.ofMillis(500);
    private Backoff probeBackoff = Backoff.builder().build();
    private TlsConfig tls;
    private KeepAlive keepAlive;

    private Builder() {}

    /** Event loop threads shared by inbounds and outbounds; 0 (default) lets Netty pick (2 per core). */
    public Builder eventLoopThreads(int threads) {
      if (threads < 0) {
        throw new IllegalArgumentException("threads must not be negative: " + threads);
      }
      this.eventLoopThreads = threads;
      return this;
    }

    /**
     * Whether connections receive into pooled heap buffers (default true), so received bodies expose
     * arrays through byte access and decoders parse them with no copy. With false they receive into
     * direct buffers and decoders that need an array copy once. Under native I/O (epoll, io_uring),
     * whose reads always land in direct memory, heap receiving copies each read into a heap buffer: the
     * copy NIO's socket read makes inside the JDK (except on h2c, which copies each DATA frame into heap
     * buffers of its stream instead).
     */
    public Builder receiveIntoHeap(boolean receiveIntoHeap) {
      this.receiveIntoHeap = receiveIntoHeap;
      return this;
    }

    /**
     * The pooled allocator every connection and every body the transport writes uses; default Netty's
     * {@link PooledByteBufAllocator#DEFAULT} (Netty 4.2's adaptive default allocated fresh chunks when
     * many large bodies were held at once). For tuning, and for tests that account for every buffer.
     */
    public Builder allocator(ByteBufAllocator allocator) {
      this.allocator = requireNonNull(allocator, "allocator");
      return this;
    }

    /**
     * How long opening an outbound connection may take; default 30 s (yarpc-go's dial timeout). It
     * bounds the TCP connect, the TLS handshake, and on an h2c or h2 connection the wait for the
     * server's first SETTINGS, each on its own.
     */
    public Builder connectTimeout(Duration timeout) {
      this.connectTimeout = Checks.positive(timeout, "timeout");
      return this;
    }

    /** Idle keep-alive HTTP/1.1 connections kept per peer; default 16. */
    public Builder maxIdleConnectionsPerPeer(int max) {
      if (max < 0) {
        throw new IllegalArgumentException("max must not be negative: " + max);
      }
      this.maxIdleConnectionsPerPeer = max;
      return this;
    }

    /** How long an unused outbound connection is kept open; default 15 min (yarpc-go's). */
    public Builder idleConnectionTimeout(Duration timeout) {
      this.idleConnectionTimeout = Checks.positive(timeout, "timeout");
      return this;
    }

    /** Largest response header block outbounds accept, in bytes; default 1 MiB. */
    public Builder maxResponseHeaderSize(int bytes) {
      if (bytes < 1024) {
        throw new IllegalArgumentException("bytes must be at least 1024: " + bytes);
      }
      this.maxResponseHeaderSize = bytes;
      return this;
    }

    /**
     * How a peer probes its address while it is retained: each probe (a TCP connect) may take {@code
     * timeout} (default 500 ms); failing probes are retried after a {@link Backoff} delay: random up to
     * {@code first * 2^n} (full jitter), capped at {@code max} (defaults 10 ms and 1 min, as yarpc-go).
     *
     * @throws IllegalArgumentException when a duration is not positive, or {@code first} is longer than
     *     {@code max}
     */
    public Builder peerProbe(Duration timeout, Duration first, Duration max) {
      this.probeTimeout = Checks.positive(timeout, "timeout");
      this.probeBackoff = Backoff.exponential(first, max);
      return this;
    }

    /**
     * The client side's TLS settings for {@code https} peers: the roots that verify servers, the
     * certificate this side presents when a server asks for one (mutual TLS), the server name to send and
     * verify. Default: none, and an {@code https} peer is verified against the JDK's trust store with
     * hostname verification, presenting no certificate. {@code http} peers stay plaintext either way.
     * Inbounds take their own config ({@link HttpInbound.Builder#tls}).
     */
    public Builder tls(TlsConfig config) {
      this.tls = requireNonNull(config, "config");
      return this;
    }

    /**
     * Keepalive for the connections to the peers (default: none, as in Go's HTTP client): a connection
     * from which nothing has arrived for {@link KeepAlive#time()} while it carries a call (or always, with
     * {@link KeepAlive#withoutCalls()}) is checked, and closed when nothing answers within {@link
     * KeepAlive#timeout()}: its calls fail at once with {@code unavailable} {@code connection to peer
     * HOST:PORT closed: no answer to a keepalive ping within TIMEOUT}, and the peer is unavailable, with
     * that reason, until a probe finds it answering again (after the probe backoff of {@link
     * #peerProbe}). How a connection is checked:
     *
     * <ul>
     *   <li>h2c and h2: an HTTP/2 {@code PING} frame on the connection.
     *   <li>HTTP/1.1: a connection that carries a call cannot carry a ping, so the peer is asked on a
     *       connection of its own, {@code OPTIONS * HTTP/1.1} (RFC 9110, section 9.3.7), one question at a time per
     *       peer; any byte of an answer proves it alive. An idle pooled connection is checked the same way
     *       with {@code withoutCalls}.
     * </ul>
     *
     * With keepalive, the probe that decides whether a peer is available asks the same question instead
     * of only connecting, so a peer whose port accepts connections but never answers (a hung process, a
     * proxy to a dead host) stays unavailable. Null turns keepalive off.
     */
    public Builder keepAlive(KeepAlive keepAlive) {
      this.keepAlive = keepAlive;
      return this;
    }

    /** The transport, not started. */
    public HttpTransport build() {
      return new HttpTransport(this);
    }
  }
}
