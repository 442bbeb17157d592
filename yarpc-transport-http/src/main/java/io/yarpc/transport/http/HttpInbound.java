package io.yarpc.transport.http;

import static java.util.Objects.requireNonNull;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.yarpc.internal.Checks;
import io.yarpc.transport.AbstractLifecycle;
import io.yarpc.transport.DeadlinePolicy;
import io.yarpc.transport.Inbound;
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
 * {@code http}.
 *
 * <p><b>Bodies and ownership.</b> A request body reaches the handler as byte access over the buffers
 * Netty received (a composite of the received chunks, never copied into an array); the invocation owns
 * it and releases it, which returns those buffers. The inbound owns every response body it is given (a
 * handler's response, or the response an error carries) and releases it once written, or once it knows
 * it cannot be written (the client left).
 *
 * <p><b>Limits.</b> Request bodies larger than {@link Builder#maxBodySize} get 413 with
 * {@code Rpc-Error-Code: resource-exhausted}; request lines and header blocks larger than
 * {@link Builder#maxHeaderSize} get 431 ({@code invalid-argument}); malformed requests get 400
 * ({@code invalid-argument}); a request not fully received within {@link Builder#readTimeout} gets 408
 * ({@code deadline-exceeded}); in each case the connection (or HTTP/2 stream) is closed after the answer
 * (an HTTP/1.1 connection lingers half-closed for a moment so the client reads the answer). Over HTTP/2 the
 * header limit is announced as {@code SETTINGS_MAX_HEADER_LIST_SIZE}; a client that ignores it gets
 * Netty's own 431 (without YARPC headers) up to 25% over the limit and a GOAWAY beyond. Connections with
 * no request for {@link Builder#idleTimeout} are closed. A client that disconnects cancels its call.
 * Non-{@code POST} methods get 404 {@code request method was GET but only POST is allowed}, except the
 * health check below.
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
  private final InboundState state = new InboundState();
  private volatile Channel server;
  private volatile InetSocketAddress bound;

  private HttpInbound(Builder b) {
    this.transport = b.transport;
    this.host = b.host;
    this.port = b.port;
    this.settings =
        new InboundSettings(
            b.maxBodySize,
            b.maxHeaderSize,
            b.idleTimeout.toNanos(),
            b.readTimeout.toNanos(),
            b.http2,
            b.maxConcurrentStreams,
            b.shutdownTimeout.toNanos(),
            b.healthPath,
            b.deadlinePolicy);
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

  /** {@code host:port} of {@link #address()}, as a peer identifier for outbounds. */
  public String hostPort() {
    InetSocketAddress a = address();
    String h = a.getAddress().getHostAddress();
    return (h.indexOf(':') >= 0 ? "[" + h + "]" : h) + ":" + a.getPort();
  }

  /** Requests received and not answered yet. */
  public int activeRequests() {
    return state.activeExchanges();
  }

  @Override
  protected void doStart() throws Exception {
    transport.start();
    ServerBootstrap b =
        new ServerBootstrap()
            .group(transport.group())
            .channel(transport.serverChannelClass())
            .option(ChannelOption.SO_BACKLOG, 1024)
            .childOption(ChannelOption.ALLOCATOR, transport.receiveAllocator())
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childHandler(new ServerInitializer(state, settings, transport.writeAllocator()));
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
    private int maxBodySize = 64 << 20;
    private int maxHeaderSize = 1 << 20;
    private Duration idleTimeout = Duration.ofMinutes(5);
    private Duration readTimeout = Duration.ofSeconds(60);
    private boolean http2 = true;
    private long maxConcurrentStreams = 1000;
    private Duration shutdownTimeout = Duration.ofSeconds(6);
    private String healthPath = "/health";
    private DeadlinePolicy deadlinePolicy = DeadlinePolicy.strict();

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

    /** Largest request body accepted, in bytes; default 64 MiB. Larger: 413, {@code resource-exhausted}. */
    public Builder maxBodySize(int bytes) {
      if (bytes < 0) {
        throw new IllegalArgumentException("bytes must not be negative: " + bytes);
      }
      this.maxBodySize = bytes;
      return this;
    }

    /**
     * Largest request line and largest header block (HTTP/2: header list), in bytes; default 1 MiB (Go's
     * {@code DefaultMaxHeaderBytes}). Larger: 431.
     */
    public Builder maxHeaderSize(int bytes) {
      if (bytes < 256) {
        throw new IllegalArgumentException("bytes must be at least 256: " + bytes);
      }
      this.maxHeaderSize = bytes;
      return this;
    }

    /** How long a connection may stay open with no request in progress; default 5 min. */
    public Builder idleTimeout(Duration timeout) {
      this.idleTimeout = Checks.positive(timeout, "timeout");
      return this;
    }

    /**
     * How long receiving one request may take, from its first byte to its last, so a client that stalls
     * half-way cannot hold a connection; default 60 s. Past it: 408 and the connection is closed.
     */
    public Builder readTimeout(Duration timeout) {
      this.readTimeout = Checks.positive(timeout, "timeout");
      return this;
    }

    /** Whether h2c (HTTP/2 with prior knowledge) is served next to HTTP/1.1; default true. */
    public Builder http2(boolean http2) {
      this.http2 = http2;
      return this;
    }

    /**
     * HTTP/2 streams a client may have open at once on one connection ({@code
     * SETTINGS_MAX_CONCURRENT_STREAMS}); default 1000. Keep it at 100 or more: clients may open up to 100
     * streams before they see this setting (Go's client assumes 100), and Netty's codec refuses streams over
     * the limit in a way that ends the connection when their data follows.
     */
    public Builder maxConcurrentStreams(long max) {
      if (max < 1) {
        throw new IllegalArgumentException("max must be positive: " + max);
      }
      this.maxConcurrentStreams = max;
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

    /** The inbound, not started. */
    public HttpInbound build() {
      return new HttpInbound(this);
    }
  }
}
