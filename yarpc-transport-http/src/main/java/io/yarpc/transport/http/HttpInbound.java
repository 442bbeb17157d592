package io.yarpc.transport.http;

import static java.util.Objects.requireNonNull;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.yarpc.netty.internal.ServerTls;
import io.yarpc.tls.TlsConfig;
import io.yarpc.tls.TlsMode;
import io.yarpc.transport.AbstractLifecycle;
import io.yarpc.transport.DeadlinePolicy;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.InboundLimits;
import io.yarpc.transport.Router;
import io.yarpc.transport.Transport;
import io.yarpc.transport.http.internal.InboundSettings;
import io.yarpc.transport.http.internal.InboundState;
import io.yarpc.transport.http.internal.ServerInitializer;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;

/**
 * Receives YARPC calls over HTTP/1.1 and h2c on one port, as yarpc-go's HTTP inbound does: {@code POST}
 * requests carrying the {@code Rpc-*} headers of docs/spec/wire-http.md, served by the dispatcher's
 * router (unary and oneway procedures; streaming ones are refused with {@code unimplemented}). Requests
 * that arrive over HTTP/2 carry the transport name {@code http2}, as in yarpc-go; over HTTP/1.1
 * {@code http}. Every call's {@link io.yarpc.transport.RequestMeta#connection()} tells the connection it
 * arrived on: the client's address and, over TLS, the session and the client's verified certificate.
 *
 * <p><b>TLS</b> ({@link Builder#tls(TlsConfig)}, off by default). With a {@link TlsConfig} the port serves
 * HTTP/1.1 and HTTP/2 over TLS: ALPN offers {@code h2} (when {@link Builder#http2} is on) and {@code
 * http/1.1}, and a client that negotiates neither is served as over plaintext (HTTP/1.1, or HTTP/2 with
 * prior knowledge). The config's {@link TlsConfig#clientAuth()} decides whether clients must present a
 * certificate its trust roots verify (mutual TLS), and its certificate files are read again for new
 * connections when they change or on {@link TlsConfig#reload()}; open connections keep their session. In
 * {@link TlsMode#ENFORCED} mode (the default of {@code tls(config)}) a plaintext client is refused: an
 * HTTP/1.1 client gets {@code 400 Bad Request} with the body {@code this port requires TLS} and {@code
 * Connection: close}, as Go's {@code net/http} answers plaintext on a TLS port; an h2c client with prior
 * knowledge gets {@code SETTINGS} and {@code GOAWAY(INADEQUATE_SECURITY)}; then the connection is closed.
 * In {@link TlsMode#PERMISSIVE} mode the first byte of each connection tells TLS from plaintext and both
 * are served on the one port (for moving clients to TLS). A failed handshake closes the connection and is
 * logged at most once a second. The limits below apply to TLS connections alike: {@code maxConnections}
 * counts them before their handshake, {@code handshakeTimeout} bounds the TLS handshake and the first
 * request together, the idle and age timers run from the connection's acceptance.
 *
 * <p><b>Bodies and ownership.</b> A request body reaches the handler as byte access over the buffers
 * Netty received (a composite of the received chunks, never copied into an array); the invocation owns
 * it and releases it, which returns those buffers. The inbound owns every response body it is given (a
 * handler's response, or the response an error carries) and releases it once written, or once it knows
 * it cannot be written (the client left).
 *
 * <p><b>Limits</b> ({@link Builder#limits}, default {@link InboundLimits#defaults()}; what a peer gets past
 * each):
 *
 * <ul>
 *   <li>{@code maxConnections}: a connection accepted beyond it is closed at once, before anything is read
 *       from it, and counted ({@link #refusedConnections()}).
 *   <li>{@code maxRequestSize}: a larger body gets 413 with {@code Rpc-Error-Code: resource-exhausted}
 *       (checked against {@code Content-Length} before any {@code 100 Continue}, and as bytes arrive).
 *   <li>{@code maxRequestLineLength}: a longer HTTP/1.1 request line gets 414 ({@code invalid-argument}).
 *   <li>{@code maxHeaderBytes}: a larger HTTP/1.1 header block gets 431 ({@code invalid-argument}). Over
 *       h2c it is announced as {@code SETTINGS_MAX_HEADER_LIST_SIZE}; a client that ignores it gets Netty's
 *       own 431 (without YARPC headers) up to 25% over it, and {@code GOAWAY} beyond (a CONTINUATION flood
 *       ends there too).
 *   <li>{@code maxHeaderCount}: more header fields (or trailer fields) get 431 ({@code invalid-argument}),
 *       found while the HTTP/1.1 head is parsed, and on h2c from the decoded header block (which {@code
 *       maxHeaderBytes} bounds while it is decoded) before it becomes a request.
 *   <li>{@code readTimeout}: a request not fully received that long after its first byte gets 408 ({@code
 *       deadline-exceeded}); time the server itself stopped receiving (budgets, pipelining) does not count.
 *   <li>{@code maxPendingBytesPerConnection}, {@code maxPendingBytes}: received request bytes not yet handed
 *       to a handler ({@link #pendingBytes()}). Past either, HTTP/1.1 stops reading the connection and h2c
 *       withholds flow-control credit from the stream, until bytes are handed on; a connection holding
 *       nothing may always receive, and its oldest request (on one connection of the inbound at a time,
 *       past the inbound's budget) may always finish, so budgets slow requests down but never deadlock them
 *       (a stalled request ends with the read timeout). An HTTP/1.1 connection stops reading anyway once a
 *       complete request waits for its turn, so it is mostly the inbound's budget that stops it. h2c stream
 *       windows are the connection's budget shared by {@code maxConcurrentCallsPerConnection} streams (64
 *       KiB to 1 MiB), so a connection holds at most about twice its budget plus one request.
 *   <li>{@code maxConcurrentCallsPerConnection}: h2c {@code SETTINGS_MAX_CONCURRENT_STREAMS} (enforced
 *       from the first stream, before the client acknowledged it); a stream beyond it gets {@code
 *       RST_STREAM(REFUSED_STREAM)}, which counts as a provoked reset below, and DATA the client goes on
 *       sending for it ends the connection with {@code GOAWAY(PROTOCOL_ERROR)} (Netty no longer knows the
 *       stream). HTTP/1.1 serves one call at a time per connection (a pipelined request waits, and reading
 *       stops while one waits).
 *   <li>{@code maxRstFramesPerWindow}: h2c resets a client sends, and (separately counted, Netty's two
 *       counters) resets it provokes the server into sending (any but {@code CANCEL} and {@code NO_ERROR}:
 *       CVE-2025-55163), beyond it within the window: {@code GOAWAY(ENHANCE_YOUR_CALM)} and the connection is
 *       closed. The window is counted in whole seconds (rounded up).
 *   <li>{@code writeTimeout}: an answer of which nothing could be written that long (the client does not
 *       read: a zero h2c flow-control window, a full socket) resets its h2c stream ({@code RST_STREAM(CANCEL)})
 *       or closes the HTTP/1.1 connection, releasing what waited to be written. An HTTP/1.1 connection also
 *       stops reading requests while its answers cannot be written.
 *   <li>{@code idleTimeout}: a connection with no call in flight that long is closed (h2c: {@code GOAWAY}
 *       first; PINGs do not keep it open).
 *   <li>{@code maxConnectionAge} and its grace: h2c gets {@code GOAWAY} and is closed once its streams are
 *       done; HTTP/1.1 gets {@code Connection: close} on its next answer (or is closed at once when it has
 *       none to give); either is closed when the grace is over.
 *   <li>{@code handshakeTimeout}: an h2c client must send its preface and SETTINGS, an HTTP/1.1 client its
 *       first request head, within it (counted from the connection's acceptance, so over TLS the TLS
 *       handshake comes out of it too); else the connection is closed.
 *   <li>{@code permitKeepAliveTime} and {@code permitKeepAliveWithoutCalls} do not apply: h2c {@code PING}s
 *       are answered, not policed (a flood from a client that does not read its answers is bounded by
 *       Netty's queue of control frames), and do not count as calls for {@code idleTimeout}. An HTTP/1.1
 *       client's keepalive question, {@code OPTIONS *}, is answered with a 404 like any request that is
 *       not a {@code POST}.
 * </ul>
 *
 * <p>After an HTTP/1.1 rejection (413, 414, 431, 400, 408, 505; 400 also for an HTTP/1.1 request without
 * a {@code Host} field or with two, RFC 9112 section 3.2) the connection is closed (it lingers half-closed
 * for a moment so the client reads the answer); after an h2c one, the stream. A client that disconnects
 * cancels its call. Non-{@code POST} methods get 404 {@code request method was GET but only POST is
 * allowed}, except the health check below.
 *
 * <p><b>Health check</b> (for load balancers and Kubernetes probes; on by default, see {@link
 * Builder#healthPath} and {@link Builder#disableHealth}): a {@code GET} or {@code HEAD} whose path (the
 * request target up to any {@code ?}) is exactly the health path, default {@code /health}, is answered
 * without any {@code Rpc-*} headers, on HTTP/1.1 and h2c alike: {@code 200} with the body {@code SERVING}
 * from start until the dispatcher begins to stop ({@link #beginDrain()}) or the inbound stops, then {@code
 * 503} with {@code NOT_SERVING} (a {@code HEAD} gets the same status and headers, no body). It is not a
 * procedure: no middleware sees it. Other methods on that path (a {@code POST} is a YARPC call as on any
 * path) and {@code GET}s of other paths are answered as before.
 *
 * <p><b>Threads.</b> Requests are parsed on the transport's event loops; handlers run wherever the
 * dispatcher runs them (its handler executor), and response bodies are serialised on the thread that
 * completes the handler, then written by the event loop. HTTP/1.1 requests on one connection are answered
 * in order (pipelined requests wait, and reading pauses while one waits).
 *
 * <p><b>Stop</b> closes the listening socket, tells every connection to finish (HTTP/1.1 connections
 * close after their current response, HTTP/2 connections send GOAWAY), waits at most
 * {@link Builder#shutdownTimeout} for in-flight requests to be answered, then closes every connection.
 */
public final class HttpInbound extends AbstractLifecycle implements Inbound {
  private final HttpTransport transport;
  private final String host;
  private final int port;
  private final InboundSettings settings;
  private final InboundState state;
  private final TlsConfig tlsConfig;
  private final TlsMode tlsMode;
  private volatile Channel server;
  private volatile InetSocketAddress bound;

  private HttpInbound(Builder b) {
    this.transport = b.transport;
    this.host = b.host;
    this.port = b.port;
    this.settings =
        new InboundSettings(
            b.limits, b.http2, b.shutdownTimeout.toNanos(), b.healthPath, b.deadlinePolicy);
    this.state = new InboundState(b.limits);
    this.tlsConfig = b.tlsConfig;
    this.tlsMode = b.tlsConfig == null ? TlsMode.DISABLED : b.tlsMode;
  }

  @Override
  public void setRouter(Router router) {
    state.router(requireNonNull(router, "router"));
  }

  /**
   * From now on the health path answers 503; calls keep being served and connections stay open. Called by
   * the dispatcher when its stop begins; idempotent.
   */
  @Override
  public void beginDrain() {
    state.serving(false);
  }

  @Override
  public List<Transport> transports() {
    return List.of(transport);
  }

  /** {@code http}. */
  @Override
  public String transportName() {
    return "http";
  }

  /** The address the inbound listens on (the actual port when built with port 0). */
  public InetSocketAddress address() {
    InetSocketAddress a = bound;
    if (a == null) {
      throw new IllegalStateException("inbound is not listening; start it first");
    }
    return a;
  }

  /** {@link #address()}, or null before {@link #start()}; after {@link #stop()}, the address it had. */
  @Override
  public InetSocketAddress listenAddress() {
    return bound;
  }

  /** {@code host:port} of {@link #address()}, as a peer identifier for outbounds. */
  public String hostPort() {
    InetSocketAddress a = address();
    String h = a.getAddress().getHostAddress();
    return (h.indexOf(':') >= 0 ? "[" + h + "]" : h) + ":" + a.getPort();
  }

  /** Whether the inbound serves TLS: {@link TlsMode#DISABLED} without a {@linkplain Builder#tls config}. */
  public TlsMode tlsMode() {
    return tlsMode;
  }

  /** Requests received and not answered yet. */
  public int activeRequests() {
    return state.activeExchanges();
  }

  /** Connections closed at once because {@code maxConnections} were open (see {@link Builder#limits}). */
  public long refusedConnections() {
    return state.refusedConnections();
  }

  /**
   * Bytes of requests received and not yet handed to a handler, on all connections (see {@code
   * maxPendingBytes} in {@link Builder#limits}).
   */
  public long pendingBytes() {
    return state.pending().total();
  }

  @Override
  protected void doStart() throws Exception {
    ServerTls tls =
        ServerTls.create(
            tlsConfig,
            tlsMode,
            settings.http2()
                ? List.of(ApplicationProtocolNames.HTTP_2, ApplicationProtocolNames.HTTP_1_1)
                : List.of(ApplicationProtocolNames.HTTP_1_1),
            "the HTTP inbound",
            settings.limits().handshakeTimeout());
    transport.start();
    ServerBootstrap b =
        new ServerBootstrap()
            .group(transport.group())
            .channel(transport.serverChannelClass())
            .option(ChannelOption.SO_BACKLOG, 1024)
            .childOption(ChannelOption.ALLOCATOR, transport.receiveAllocator())
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childHandler(
                new ServerInitializer(
                    state, settings, transport.writeAllocator(), transport.receiveIntoHeap(), tls));
    Channel ch = b.bind(host, port).sync().channel();
    server = ch;
    bound = (InetSocketAddress) ch.localAddress();
    state.serving(true);
  }

  @Override
  protected void doStop() {
    state.serving(false);
    Channel ch = server;
    if (ch != null) {
      ch.close().awaitUninterruptibly();
    }
    state.drainAndClose(settings.shutdownTimeoutNanos());
  }

  @Override
  public String toString() {
    InetSocketAddress a = bound;
    return "HttpInbound{" + (a != null ? a : host + ":" + port) + "}";
  }

  /** Builds an {@link HttpInbound}; get one from {@link HttpTransport#inboundBuilder()}. Not thread-safe. */
  public static final class Builder {
    private final HttpTransport transport;
    private String host = "127.0.0.1";
    private int port;
    private InboundLimits limits = InboundLimits.defaults();
    private boolean http2 = true;
    private Duration shutdownTimeout = Duration.ofSeconds(6);
    private String healthPath = "/health";
    private DeadlinePolicy deadlinePolicy = DeadlinePolicy.strict();
    private TlsConfig tlsConfig;
    private TlsMode tlsMode = TlsMode.DISABLED;

    Builder(HttpTransport transport) {
      this.transport = transport;
    }

    /** Where to listen; default {@code 127.0.0.1} and port 0 (any free port, see {@link HttpInbound#address()}). */
    public Builder address(String host, int port) {
      this.host = requireNonNull(host, "host");
      if (port < 0 || port > 65535) {
        throw new IllegalArgumentException("port out of range: " + port);
      }
      this.port = port;
      return this;
    }

    /**
     * What peers may send, how slowly and how often; default {@link InboundLimits#defaults()}. The class
     * comment says what a peer gets past each limit over HTTP/1.1 and h2c; {@code permitKeepAliveTime}
     * and {@code permitKeepAliveWithoutCalls} do not apply to HTTP.
     */
    public Builder limits(InboundLimits limits) {
      this.limits = requireNonNull(limits, "limits");
      return this;
    }

    /** Whether h2c (HTTP/2 with prior knowledge) is served next to HTTP/1.1; default true. */
    public Builder http2(boolean http2) {
      this.http2 = http2;
      return this;
    }

    /** How long {@link HttpInbound#stop()} waits for in-flight requests; default 6 s (yarpc-go's). */
    public Builder shutdownTimeout(Duration timeout) {
      requireNonNull(timeout, "timeout");
      if (timeout.isNegative()) {
        throw new IllegalArgumentException("timeout must not be negative: " + timeout);
      }
      this.shutdownTimeout = timeout;
      return this;
    }

    /**
     * The path of the health check (see the class comment), and turns it on; default {@code /health}. It
     * must start with {@code /} and hold no {@code ?}, {@code #}, space or control character.
     */
    public Builder healthPath(String path) {
      requireNonNull(path, "path");
      if (!path.startsWith("/")) {
        throw new IllegalArgumentException("health path must start with '/': \"" + path + "\"");
      }
      for (int i = 0; i < path.length(); i++) {
        char c = path.charAt(i);
        if (c == '?' || c == '#' || c <= ' ' || c == 0x7f) {
          throw new IllegalArgumentException(
              "health path must not contain '?', '#', spaces or control "
                  + "characters: \""
                  + path
                  + "\"");
        }
      }
      this.healthPath = path;
      return this;
    }

    /**
     * Turns the health check off: a {@code GET} of the health path is then answered like any other
     * {@code GET} (404). {@link #healthPath} turns it on again.
     */
    public Builder disableHealth() {
      this.healthPath = null;
      return this;
    }

    /**
     * What calls without {@code Context-TTL-MS}, or with a very distant deadline, are handled with;
     * default {@link DeadlinePolicy#strict()}: a unary or oneway call without one is refused with {@code
     * missing TTL}, as yarpc-go's HTTP inbound does. {@code DeadlinePolicy.withDefaultTimeout(...)} serves
     * plain HTTP clients that send none with unary calls (a oneway call without one is still refused: the
     * policy gives unary calls only a default).
     */
    public Builder deadlinePolicy(DeadlinePolicy policy) {
      this.deadlinePolicy = requireNonNull(policy, "policy");
      return this;
    }

    /**
     * Serves TLS only ({@link TlsMode#ENFORCED}) with {@code config}: its certificate, and the roots that
     * verify client certificates when its {@link TlsConfig#clientAuth()} asks for them. Same as {@code
     * tls(config, TlsMode.ENFORCED)}.
     *
     * @throws IllegalArgumentException when {@code config} has no certificate
     */
    public Builder tls(TlsConfig config) {
      return tls(config, TlsMode.ENFORCED);
    }

    /**
     * Serves TLS with {@code config} in {@code mode}: {@link TlsMode#ENFORCED} refuses plaintext clients (see
     * the class comment), {@link TlsMode#PERMISSIVE} serves TLS and plaintext clients on the one port,
     * {@link TlsMode#DISABLED} plaintext only (the default; {@code config} is then ignored). ALPN offers
     * {@code h2} (when {@link #http2} is on) and {@code http/1.1}.
     *
     * @throws IllegalArgumentException when TLS is on and {@code config} has no certificate
     */
    public Builder tls(TlsConfig config, TlsMode mode) {
      requireNonNull(config, "config");
      requireNonNull(mode, "mode");
      if (mode != TlsMode.DISABLED) {
        config.requireCertificate("the HTTP inbound");
      }
      this.tlsConfig = mode == TlsMode.DISABLED ? null : config;
      this.tlsMode = mode;
      return this;
    }

    /** The inbound, not started. */
    public HttpInbound build() {
      return new HttpInbound(this);
    }
  }
}
