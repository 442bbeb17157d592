package io.yarpc.transport.http.internal;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.ScheduledFuture;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.Checks;
import io.yarpc.netty.internal.IoErrors;
import io.yarpc.netty.internal.KeepAliveHandler;
import io.yarpc.netty.internal.TlsErrors;
import io.yarpc.peer.AbstractPeer;
import io.yarpc.peer.ConnectionStatus;
import io.yarpc.transport.KeepAlive;
import java.net.ConnectException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * One remote {@code host:port} of an HTTP transport: its connection status, a pool of keep-alive HTTP/1.1
 * connections, and one multiplexed h2c connection (opened on first use, replaced after GOAWAY or close).
 *
 * <p>Status (yarpc-go's HTTP peer, docs/spec/model.md §7.4): while retained, a probe (a plain TCP
 * connect, then close) decides between {@link ConnectionStatus#AVAILABLE} and
 * {@link ConnectionStatus#UNAVAILABLE}; a failing probe is retried with exponential backoff and full
 * jitter. A failed connection attempt or an I/O error during a call moves the peer back to
 * {@link ConnectionStatus#CONNECTING} and probes again; a successful connection makes it available.
 * Subscribers are told of every change, outside any lock.
 *
 * <p>Keepalive ({@link HttpKeepAlive}, when the transport has one): a connection closed because its ping
 * went unanswered makes the peer {@link ConnectionStatus#UNAVAILABLE}, with the keepalive's reason, and
 * the next probe waits for the backoff; the probe asks {@code OPTIONS *} instead of only connecting, so
 * the peer is available again only once the server answers.
 *
 * <p>TLS: a peer named {@code https://host:port} opens its connections ({@link PeerConnector}) with a
 * TLS handler from the transport's {@link OutboundTls} (SNI and hostname verification for {@code host},
 * or the config's server name) and adds the HTTP handlers only once the handshake succeeded; HTTP/2 needs
 * the server to choose ALPN {@code h2}. A failed handshake fails the call with {@link
 * TlsErrors#handshakeFailure} and counts as a failed connection. Without keepalive the probe stays a TCP
 * connect: a port that accepts connections is available, and a call finds out whether the handshake
 * works.
 *
 * <p>Ownership: the {@link io.yarpc.transport.http.HttpTransport} creates peers and reference-counts their
 * subscribers; it closes a peer when its last subscriber releases it, which lets its connections go once
 * their calls have ended ({@link #close()}).
 */
public final class HttpPeer extends AbstractPeer {
  private final String host;
  private final int port;
  private final String authority;
  private final boolean tls;
  private final Supplier<ClientContext> contexts;
  private final HttpKeepAlive keepAlive; // null: off
  private final PeerConnector connector;
  private final Object lock = new Object();
  private final ArrayDeque<Channel> idle = new ArrayDeque<>(); // guarded by lock
  private final List<Channel> open = new ArrayList<>(); // guarded by lock; every h1 channel
  private H2Connection h2; // guarded by lock
  private volatile ConnectionStatus status = ConnectionStatus.CONNECTING;
  private boolean closed; // guarded by lock
  private boolean probing; // guarded by lock
  private int probeAttempts; // guarded by lock
  private ScheduledFuture<?> probeTimer; // guarded by lock
  private boolean probeInFlight; // guarded by lock: a probe's connect attempt is running
  private volatile String lastProbeFailure; // why the last probe failed; null once it succeeds

  /**
   * A peer for {@code identifier}: {@code host:port} or {@code http://host:port} (plaintext), or {@code
   * https://host:port} (TLS), IPv6 hosts in brackets; {@code contexts} gives the running transport's client
   * context (null while it is not running); {@code keepAlive} is the transport's (null: off).
   */
  public HttpPeer(String identifier, Supplier<ClientContext> contexts, KeepAlive keepAlive) {
    super(identifier);
    this.contexts = contexts;
    String address = identifier;
    int scheme = identifier.indexOf("://");
    if (scheme >= 0) {
      String name = identifier.substring(0, scheme).toLowerCase(Locale.ROOT);
      if (!name.equals("http") && !name.equals("https")) {
        throw new IllegalArgumentException(
            "peer identifier must be host:port, http://host:port or https://host:port, got \""
                + identifier
                + "\"");
      }
      this.tls = name.equals("https");
      address = identifier.substring(scheme + 3);
    } else {
      this.tls = false;
    }
    int colon = address.lastIndexOf(':');
    if (colon <= 0 || colon == address.length() - 1) {
      throw new IllegalArgumentException(
          "peer identifier must be host:port, got \"" + identifier + "\"");
    }
    this.authority = address;
    String h = address.substring(0, colon);
    if (h.startsWith("[") && h.endsWith("]")) {
      h = h.substring(1, h.length() - 1);
    }
    this.host = h;
    try {
      this.port = Integer.parseInt(address.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "peer identifier must be host:port, got \"" + identifier + "\"", e);
    }
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("port out of range in \"" + identifier + "\"");
    }
    this.connector = new PeerConnector(identifier, host, port, tls, contexts);
    this.keepAlive = keepAlive == null ? null : new HttpKeepAlive(this, connector, keepAlive);
  }

  /** {@code host:port} of the peer (the identifier without its scheme), as the {@code Host} header. */
  public String authority() {
    return authority;
  }

  /** Whether connections to the peer are TLS (an {@code https://} identifier). */
  public boolean isTls() {
    return tls;
  }

  private ClientContext context() {
    ClientContext c = contexts.get();
    if (c == null) {
      throw Checks.notRunning("HTTP transport");
    }
    return c;
  }

  @Override
  public ConnectionStatus status() {
    return status;
  }

  private void setStatus(ConnectionStatus next) {
    synchronized (lock) {
      if (status == next || closed) {
        return;
      }
      status = next;
    }
    notifySubscribers();
  }

  // ---------------------------------------------------------------------------------------------------
  // Probing

  /** Starts probing (when not already), so the status becomes available or unavailable. */
  public void startProbing() {
    synchronized (lock) {
      if (closed || probing) {
        return;
      }
      probing = true;
    }
    probe();
  }

  /**
   * A call waits for this peer: when it is not available and no probe is connecting, probe now instead
   * of at the end of the current backoff.
   */
  @Override
  public void connectNow() {
    synchronized (lock) {
      if (closed || status == ConnectionStatus.AVAILABLE || probeInFlight) {
        return;
      }
      if (probeTimer != null) {
        probeTimer.cancel(false);
        probeTimer = null;
      }
      probing = true;
    }
    probe();
  }

  @Override
  public String unavailableReason() {
    return lastProbeFailure;
  }

  private void probe() {
    synchronized (lock) {
      if (probeInFlight) {
        return;
      }
      probeInFlight = true;
    }
    CompletableFuture<Void> answer;
    try {
      answer = keepAlive != null ? keepAlive.ask() : connects();
    } catch (RuntimeException e) { // not running, or event loop shut down
      synchronized (lock) {
        probing = false;
        probeInFlight = false;
      }
      return;
    }
    answer.whenComplete(
        (v, error) -> {
          if (error == null) {
            synchronized (lock) {
              probing = false;
              probeInFlight = false;
              probeAttempts = 0;
            }
            lastProbeFailure = null;
            setStatus(ConnectionStatus.AVAILABLE);
          } else {
            Throwable why = error instanceof CompletionException ? error.getCause() : error;
            lastProbeFailure =
                why instanceof YarpcException ? why.getMessage() : IoErrors.describe(why);
            synchronized (lock) {
              probeInFlight = false;
            }
            setStatus(ConnectionStatus.UNAVAILABLE);
            scheduleProbe();
          }
        });
  }

  /** The probe without keepalive: a TCP connect, closed at once. */
  private CompletableFuture<Void> connects() {
    CompletableFuture<Void> connected = new CompletableFuture<>();
    new Bootstrap()
        .group(context().group())
        .channel(context().channelClass())
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, context().probeTimeoutMillis())
        .handler(new ChannelInboundHandlerAdapter())
        .connect(host, port)
        .addListener(
            (ChannelFutureListener)
                done -> {
                  if (done.isSuccess()) {
                    done.channel().close();
                    connected.complete(null);
                  } else {
                    connected.completeExceptionally(done.cause());
                  }
                });
    return connected;
  }

  private void scheduleProbe() {
    synchronized (lock) {
      if (closed) {
        probing = false;
        return;
      }
      int attempt = probeAttempts;
      probeAttempts = Math.min(attempt + 1, 64); // the backoff stops growing long before
      try {
        ClientContext c = context();
        long delay = c.probeBackoff().delayNanos(attempt);
        probeTimer = c.group().schedule(this::probe, delay, TimeUnit.NANOSECONDS);
      } catch (RuntimeException e) {
        probing = false;
      }
    }
  }

  /** A call got a response: the peer is reachable. */
  void callSucceeded() {
    if (status != ConnectionStatus.AVAILABLE) {
      setStatus(ConnectionStatus.AVAILABLE);
    }
  }

  /**
   * A connection failed: back to connecting, and probe again (unless the peer is unavailable: then a
   * probe is already on its way).
   */
  void disconnected() {
    synchronized (lock) {
      if (closed || !isRetained() || status == ConnectionStatus.UNAVAILABLE) {
        return;
      }
    }
    setStatus(ConnectionStatus.CONNECTING);
    startProbing();
  }

  /**
   * A connection closed; when its keepalive closed it (its ping went unanswered), the peer is
   * unavailable, with that reason, until a probe after the backoff finds it answering.
   */
  private void connectionClosed(Channel ch) {
    String why = KeepAliveHandler.failure(ch);
    if (why == null) {
      return;
    }
    boolean probeLater;
    synchronized (lock) {
      if (closed || !isRetained()) {
        return;
      }
      lastProbeFailure = "the connection was closed: " + why;
      probeLater = !probing;
      probing = true;
    }
    setStatus(ConnectionStatus.UNAVAILABLE);
    if (probeLater) {
      scheduleProbe();
    }
  }

  /** The error of a call whose connection could not be opened or failed. */
  YarpcException connectionFailure(Throwable cause) {
    if (cause == null) {
      return YarpcException.of(Code.UNAVAILABLE, "connection to peer %s was closed", identifier());
    }
    if (cause instanceof YarpcException) {
      return (YarpcException) cause; // a TLS handshake's failure, already told
    }
    if (tls && TlsErrors.isTls(cause)) {
      // With TLS 1.3 a server refuses a client's certificate after the client's side of the
      // handshake ended: the alert arrives with the first response.
      return TlsErrors.handshakeFailure(identifier(), cause);
    }
    if (cause instanceof ConnectException) {
      return YarpcException.withCause(
          Code.UNAVAILABLE,
          "cannot connect to peer " + identifier() + ": " + IoErrors.describe(cause),
          cause);
    }
    return YarpcException.withCause(
        Code.UNAVAILABLE,
        "connection to peer " + identifier() + " failed: " + IoErrors.describe(cause),
        cause);
  }

  // ---------------------------------------------------------------------------------------------------
  // Calls

  /**
   * Sends {@code request} over HTTP/1.1 ({@code http2} false) or h2c; the call owns the request. A
   * released peer refuses the call with core's released error ({@link #beginCall}); a call sent before the
   * release finishes on its connection.
   */
  public ClientCall send(FullHttpRequest request, boolean http2, int maxResponseBodySize) {
    ClientCall call = new ClientCall(request, maxResponseBodySize);
    try {
      return beginCall(
          () -> {
            if (http2) {
              sendH2(call);
            } else {
              sendH1(call);
            }
            return call;
          });
    } catch (YarpcException released) { // nothing was sent
      call.fail(released);
      return call;
    }
  }

  private void sendH1(ClientCall call) {
    Channel reuse = null;
    synchronized (lock) {
      // none is idle once the transport's stop closed the peer: a new connection fails
      while (!idle.isEmpty()) {
        Channel ch = idle.pollLast();
        if (ch.isActive()) {
          reuse = ch;
          break;
        }
      }
    }
    if (reuse != null) {
      Channel ch = reuse;
      try {
        ch.eventLoop()
            .execute(
                () -> {
                  ClientResponseHandler h = h1Handler(ch);
                  if (h == null) {
                    // closed, its pipeline taken down, before the call got to it: nothing was sent
                    resendUnsent(call, null);
                  } else {
                    h.start(call, true);
                  }
                });
      } catch (RejectedExecutionException e) {
        call.fail(Checks.notRunning("HTTP transport"));
      }
      return;
    }
    sendOnNewConnection(call);
  }

  /**
   * {@code call} was not sent on the reused connection it was given (found closed): it goes out on a new
   * connection while it may retry, else fails unprocessed with {@code cause}.
   */
  void resendUnsent(ClientCall call, Throwable cause) {
    if (call.mayRetry()) {
      sendOnNewConnection(call);
    } else {
      call.failUnprocessed(connectionFailure(cause)); // nothing was written
    }
  }

  /** Opens a new HTTP/1.1 connection for {@code call}. */
  void sendOnNewConnection(ClientCall call) {
    if (call.isSettled()) {
      return;
    }
    try {
      connector.connect(
          false,
          p -> {
            p.addLast(
                "idle",
                new IdleStateHandler(
                    0, 0, context().idleConnectionTimeoutNanos(), TimeUnit.NANOSECONDS));
            p.addLast(
                "http",
                new HttpClientCodec(
                    new HttpDecoderConfig()
                        .setMaxHeaderSize(context().maxResponseHeaderSize())
                        .setMaxInitialLineLength(context().maxResponseHeaderSize())
                        .setMaxChunkSize(1 << 20),
                    false,
                    false));
            ClientResponseHandler calls = new ClientResponseHandler(HttpPeer.this);
            p.addLast("yarpc", calls);
            if (keepAlive != null) {
              keepAlive.installH1(p, calls);
            }
          },
          (ch, error) -> {
            if (error != null) {
              call.failUnprocessed(connectionFailure(error)); // no connection, nothing sent
              disconnected();
              return;
            }
            synchronized (lock) {
              open.add(ch); // after a release: closed by releaseH1 when the call ends
            }
            ch.closeFuture()
                .addListener(
                    c -> {
                      synchronized (lock) {
                        open.remove(ch);
                        idle.remove(ch);
                      }
                      connectionClosed(ch);
                    });
            callSucceeded();
            h1Handler(ch).start(call, false);
          });
    } catch (RuntimeException e) {
      call.fail(
          e instanceof YarpcException ? (YarpcException) e : Checks.notRunning("HTTP transport"));
    }
  }

  private static ClientResponseHandler h1Handler(Channel ch) {
    return (ClientResponseHandler) ch.pipeline().get("yarpc");
  }

  /** Takes an HTTP/1.1 connection back after an exchange; it is kept idle if reusable and there is room. */
  void releaseH1(Channel ch, boolean reusable) {
    boolean keep = false;
    if (reusable && ch.isActive()) {
      synchronized (lock) {
        ClientContext c = contexts.get();
        if (!closed && c != null && idle.size() < c.maxIdleConnectionsPerPeer()) {
          idle.addLast(ch);
          keep = true;
        }
      }
    }
    if (!keep) {
      ch.close();
    }
  }

  // ---------------------------------------------------------------------------------------------------
  // h2c

  /**
   * The multiplexed h2c (or h2) connection and its {@link Http2ClientHandler}, which is {@linkplain
   * Http2ClientHandler#ready ready} once the server's first SETTINGS have arrived: streams are only opened
   * after that, so the client never exceeds the server's {@code SETTINGS_MAX_CONCURRENT_STREAMS} (streams
   * over it wait in the encoder for a free slot).
   */
  private static final class H2Connection {
    final Http2ClientHandler handler;
    volatile Channel channel;

    H2Connection(Http2ClientHandler handler) {
      this.handler = handler;
    }

    boolean usable() {
      Channel ch = channel;
      return !handler.goingAway()
          && !handler.ready().isCompletedExceptionally()
          && (ch == null || ch.isActive());
    }
  }

  /** Sends {@code call} on a stream of the peer's h2c connection (a new connection when needed). */
  void sendH2(ClientCall call) {
    H2Connection conn;
    synchronized (lock) {
      if (closed) { // by the transport's stop (a released peer refused the call: beginCall)
        call.failUnprocessed(Checks.notRunning("HTTP transport"));
        return;
      }
      conn = h2;
      if (conn == null || !conn.usable()) {
        try {
          conn = h2 = connectH2();
        } catch (RuntimeException e) {
          call.fail(
              e instanceof YarpcException
                  ? (YarpcException) e
                  : Checks.notRunning("HTTP transport"));
          return;
        }
      }
    }
    H2Connection c = conn;
    c.handler
        .ready()
        .whenComplete(
            (ch, error) -> {
              if (error != null) {
                call.failUnprocessed(connectionFailure(error)); // it never became ready
                disconnected();
                return;
              }
              callSucceeded();
              if (!call.isSettled()) {
                c.handler.send(call);
              }
            });
  }

  private H2Connection connectH2() {
    ClientContext context = context();
    H2Connection conn =
        new H2Connection(
            Http2ClientHandler.create(
                this, context.maxResponseHeaderSize(), context.connectTimeoutMillis()));
    ChannelFuture f =
        connector.connect(
            true,
            p -> {
              p.addLast(
                  "idle",
                  new IdleStateHandler(
                      0, 0, context.idleConnectionTimeoutNanos(), TimeUnit.NANOSECONDS));
              p.addLast("h2", conn.handler);
              if (keepAlive != null) {
                keepAlive.installH2(p, conn.handler);
              }
            },
            (ch, error) -> {
              if (error != null) {
                conn.handler.ready().completeExceptionally(error);
              }
            });
    f.addListener(
        (ChannelFutureListener)
            done -> {
              if (!done.isSuccess()) {
                return; // the connection's failure is told above
              }
              conn.channel = done.channel();
              done.channel().closeFuture().addListener(c -> connectionClosed(done.channel()));
              // connected after the release: close() closes it once ready, after the calls that
              // began
            });
    return conn;
  }

  // ---------------------------------------------------------------------------------------------------

  /**
   * Stops probing and lets the connections go without failing a call: idle HTTP/1.1 connections close
   * now, busy ones when their call ends ({@link #releaseH1}), and the h2c connection, once it is ready
   * and the calls that began while it was opening have opened their streams, sends GOAWAY and closes once
   * its streams have ended (Netty's graceful close). A call sent through the peer after its
   * release is refused ({@link #send}). The transport's stop closes whatever is left.
   */
  public void close() {
    List<Channel> toClose;
    H2Connection conn;
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      if (probeTimer != null) {
        probeTimer.cancel(false);
      }
      toClose = new ArrayList<>(idle);
      idle.clear();
      conn = h2;
      h2 = null;
    }
    for (Channel ch : toClose) {
      ch.close();
    }
    if (conn != null) {
      // Once the connection is ready, and then as a task of its event loop: a call that began
      // before
      // the release waits for ready() too, in a callback registered before this one, which
      // CompletableFuture runs after this one; the task runs after them all, so their streams are
      // open.
      // The close is graceful (Netty's HTTP/2 handler sends GOAWAY, then closes once they have
      // ended).
      conn.handler.ready().whenComplete((ready, error) -> closeLater(conn.channel));
    }
  }

  private static void closeLater(Channel ch) {
    if (ch == null) {
      return; // it never connected
    }
    try {
      ch.eventLoop().execute(ch::close);
    } catch (RejectedExecutionException e) {
      ch.close(); // the event loop stopped
    }
  }

  @Override
  public String toString() {
    return "HttpPeer{" + identifier() + ", " + status + "}";
  }
}
