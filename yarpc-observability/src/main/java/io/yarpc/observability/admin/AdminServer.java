package io.yarpc.observability.admin;

import static java.util.Objects.requireNonNull;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.yarpc.Dispatcher;
import io.yarpc.internal.Checks;
import io.yarpc.observability.admin.internal.AdminChannels;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * An admin listener for one dispatcher: a small HTTP/1.1 server on its own port, separate from the
 * dispatcher's inbounds, for operators, probes and scrapers.
 *
 * <pre>{@code
 * PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
 * AdminServer admin =
 *     AdminServer.builder(dispatcher).port(9090).meterRegistry(registry).build().start();
 * // ... dispatcher.start(), serve, dispatcher.stop() ...
 * admin.stop();
 * }</pre>
 *
 * <table>
 *   <caption>Endpoints (GET and HEAD; another method on them is answered 405)</caption>
 *   <tr><th>path</th><th>answer</th></tr>
 *   <tr><td>{@code /metrics}</td><td>the {@linkplain Builder#meterRegistry registry}'s meters in the
 *       Prometheus text format ({@code text/plain; version=0.0.4; charset=utf-8}), or OpenMetrics text
 *       ({@code application/openmetrics-text; version=1.0.0; charset=utf-8}) when the {@code Accept}
 *       header asks for it, as Prometheus does; 404 with a text saying so when the server was built
 *       without a registry</td></tr>
 *   <tr><td>{@code /health}</td><td>200 {@code SERVING} while the dispatcher {@linkplain
 *       Dispatcher#isRunning() runs}; 503 {@code NOT_SERVING} before it starts and from the moment its
 *       stop begins (while calls drain), like the inbounds' own health checks</td></tr>
 *   <tr><td>{@code /debug/yarpc}</td><td>an HTML page of {@link Dispatcher#introspect()}: the
 *       procedures and their calls in flight, the inbounds and where they listen, the outbounds and
 *       their peers (status, pending requests, why a peer is unavailable). Self-contained: no script,
 *       no external style sheet, font or image</td></tr>
 *   <tr><td>{@code /debug/yarpc.json}</td><td>the same as JSON, for tools and tests (field names are
 *       those of {@link io.yarpc.DispatcherStatus}'s components; enums by name; addresses as {@code
 *       host:port})</td></tr>
 * </table>
 *
 * Any other path is answered 404. The query string is ignored.
 *
 * <p><b>Bounds.</b> A request line longer than 4 KiB is answered 414, a header block larger than 16 KiB
 * 431, a body larger than 4 KiB 413, a request that cannot be parsed 400; each of these closes the
 * connection. At most {@linkplain Builder#maxConnections connections} are open at once (more are closed
 * as soon as they are accepted), and a connection that sends and receives nothing for the {@linkplain
 * Builder#idleTimeout idle timeout} is closed. Answers are plain text (or the page) and never carry a
 * stack trace: a failure while building one is logged (slf4j, logger {@code
 * io.yarpc.observability.admin}) and answered 500.
 *
 * <p><b>Security.</b> The endpoints tell the service's procedures and the addresses of its peers, and
 * need no credentials: keep the listener on loopback (the default) or on a network only operators
 * reach. It serves plain HTTP.
 *
 * <p><b>Threads.</b> The server runs one daemon I/O thread of its own ({@code yarpc-admin-N}) and
 * answers on it; it never blocks the dispatcher or its transports. {@link #start()} and {@link #stop()}
 * are thread-safe; the server may be started before the dispatcher (health reads {@code NOT_SERVING}
 * then) and outlive it.
 */
public final class AdminServer implements AutoCloseable {
  private final Dispatcher dispatcher;
  private final String host;
  private final int port;
  private final PrometheusMeterRegistry registry;
  private final int maxConnections;
  private final Duration idleTimeout;

  private enum State {
    NEW,
    RUNNING,
    STOPPED
  }

  private State state = State.NEW; // guarded by this
  private AdminChannels channels; // guarded by this
  private volatile InetSocketAddress address;

  private AdminServer(Builder b) {
    this.dispatcher = b.dispatcher;
    this.host = b.host;
    this.port = b.port;
    this.registry = b.registry;
    this.maxConnections = b.maxConnections;
    this.idleTimeout = b.idleTimeout;
  }

  /** A builder for an admin server that shows {@code dispatcher}. */
  public static Builder builder(Dispatcher dispatcher) {
    return new Builder(dispatcher);
  }

  /**
   * Binds the port and starts answering; returns this server. A second call does nothing.
   *
   * @throws IllegalStateException when the server was stopped, or cannot listen (the message names the
   *     address and the reason, e.g. {@code Address already in use}); nothing is left running then
   */
  public synchronized AdminServer start() {
    if (state == State.RUNNING) {
      return this;
    }
    if (state == State.STOPPED) {
      throw new IllegalStateException("admin server was stopped and cannot start again");
    }
    AdminChannels started =
        AdminChannels.start(dispatcher, registry, host, port, maxConnections, idleTimeout);
    channels = started;
    address = started.address();
    state = State.RUNNING;
    return this;
  }

  /**
   * Stops listening, closes every connection and ends the server's thread; waits for that (at most a few
   * seconds). Idempotent; a server stopped before it started never starts.
   */
  public void stop() {
    AdminChannels toStop;
    synchronized (this) {
      if (state == State.STOPPED) {
        return;
      }
      state = State.STOPPED;
      toStop = channels;
      channels = null;
    }
    if (toStop != null) {
      toStop.stop();
    }
  }

  /** {@link #stop()}. */
  @Override
  public void close() {
    stop();
  }

  /** Whether the server is started and not stopped. */
  public synchronized boolean isRunning() {
    return state == State.RUNNING;
  }

  /**
   * The address the server listens on, with the actual port when it was built with port 0.
   *
   * @throws IllegalStateException before {@link #start()}
   */
  public InetSocketAddress address() {
    InetSocketAddress a = address;
    if (a == null) {
      throw new IllegalStateException("admin server is not started");
    }
    return a;
  }

  /**
   * {@code http://host:port} followed by {@code path}, e.g. {@code url("/debug/yarpc")}; the host is
   * the address listened on (an IPv6 literal in brackets).
   *
   * @throws IllegalStateException before {@link #start()}
   */
  public String url(String path) {
    requireNonNull(path, "path");
    return "http://" + AdminChannels.hostPort(address()) + path;
  }

  @Override
  public String toString() {
    InetSocketAddress a = address;
    return "AdminServer{" + (a != null ? AdminChannels.hostPort(a) : host + ":" + port) + "}";
  }

  /** Builds an {@link AdminServer}; not thread-safe. */
  public static final class Builder {
    private final Dispatcher dispatcher;
    private String host = "127.0.0.1";
    private int port;
    private PrometheusMeterRegistry registry;
    private int maxConnections = 16;
    private Duration idleTimeout = Duration.ofSeconds(30);

    private Builder(Dispatcher dispatcher) {
      this.dispatcher = requireNonNull(dispatcher, "dispatcher");
    }

    /**
     * The address to listen on: a host name or IP literal; default {@code 127.0.0.1} (loopback only).
     * {@code 0.0.0.0} listens on every interface: see the class comment on security.
     */
    public Builder host(String host) {
      requireNonNull(host, "host");
      if (host.isEmpty()) {
        throw new IllegalArgumentException("host must not be empty");
      }
      this.host = host;
      return this;
    }

    /** The port to listen on, 0 to 65535; default 0 (any free port: see {@link #address()}). */
    public Builder port(int port) {
      if (port < 0 || port > 65535) {
        throw new IllegalArgumentException("port must be between 0 and 65535: " + port);
      }
      this.port = port;
      return this;
    }

    /**
     * The registry {@code /metrics} exposes; default none ({@code /metrics} answers 404). The server only
     * reads it; what gets recorded in it (the dispatcher's call metrics, JVM meters) is the caller's
     * choice.
     */
    public Builder meterRegistry(PrometheusMeterRegistry registry) {
      this.registry = requireNonNull(registry, "registry");
      return this;
    }

    /**
     * Connections open at once; default 16. A connection accepted beyond it is closed at once, before
     * anything is read from it.
     */
    public Builder maxConnections(int max) {
      if (max < 1) {
        throw new IllegalArgumentException("maxConnections must be positive: " + max);
      }
      this.maxConnections = max;
      return this;
    }

    /**
     * How long a connection may stay open with nothing read or written; default 30 s. Then it is closed
     * (also when a request is only partly received).
     */
    public Builder idleTimeout(Duration timeout) {
      this.idleTimeout = Checks.positive(timeout, "idleTimeout");
      return this;
    }

    /** The server, not started. */
    public AdminServer build() {
      return new AdminServer(this);
    }
  }
}
