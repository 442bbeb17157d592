package io.yarpc.transport.tchannel.internal;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.Futures;
import io.yarpc.netty.internal.IoErrors;
import io.yarpc.netty.internal.KeepAliveHandler;
import io.yarpc.netty.internal.TlsErrors;
import io.yarpc.peer.AbstractPeer;
import io.yarpc.peer.ConnectionStatus;
import io.yarpc.retry.Backoff;
import io.yarpc.transport.Body;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.tchannel.ChecksumType;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;

/**
 * One remote {@code host:port} and its one connection, owned by the transport and shared by every
 * outbound that retains it. The connection is opened when the peer is retained (while the transport
 * runs), reopened with a {@link Backoff} (10 ms doubling up to 1 s, full jitter) while the peer stays
 * retained, and closed when the last subscriber releases the peer (once the calls in flight on it have
 * ended) or the transport stops. A connection
 * the peer dialled belongs to the peer; a connection the peer adopted from an inbound (the remote side
 * dialled us and advertised this {@code host:port}) stays the inbound's and is not closed by the peer.
 *
 * <p>Status: {@link ConnectionStatus#AVAILABLE} while the connection's handshake is done and it is open,
 * {@link ConnectionStatus#CONNECTING} while dialling, {@link ConnectionStatus#UNAVAILABLE} otherwise;
 * subscribers are told every change. A connection the transport's keepalive closed (its ping went
 * unanswered) leaves the peer unavailable until the next dial, with the keepalive's reason as its {@link
 * #unavailableReason()}. Thread-safe.
 */
public final class TChannelPeer extends AbstractPeer {
  /** What the peer needs from its transport. */
  public interface Host {
    /** Dials {@code identifier}; the future completes with a connection whose handshake is done. */
    CompletableFuture<Connection> dial(String identifier);

    /** Whether the transport runs (dialling is possible). */
    boolean isRunning();

    /** Runs {@code task} after {@code nanos}. */
    ScheduledFuture<?> schedule(Runnable task, long nanos);
  }

  private static final Backoff RECONNECT =
      Backoff.exponential(Duration.ofMillis(10), Duration.ofSeconds(1));

  private final Host host;
  // written under this object's lock; volatile so that status(), read on every call, takes no lock
  private volatile Connection connection;
  private volatile CompletableFuture<Connection> connecting;
  private ScheduledFuture<?> reconnect; // guarded by this
  private volatile String lastDialFailure; // why the last dial failed; null once connected
  private int failures; // guarded by this
  private boolean closed; // guarded by this

  /** A peer for {@code identifier}, not connected yet. */
  public TChannelPeer(String identifier, Host host) {
    super(identifier);
    this.host = host;
  }

  /** Without the lock (choosers ask on every call): a snapshot of the two fields. */
  @Override
  public ConnectionStatus status() {
    Connection c = connection;
    if (c != null && c.isActive()) {
      return ConnectionStatus.AVAILABLE;
    }
    return connecting != null ? ConnectionStatus.CONNECTING : ConnectionStatus.UNAVAILABLE;
  }

  /** Whether {@code host} made this peer. */
  public boolean belongsTo(Host host) {
    return this.host == host;
  }

  /** The current connection, or null. */
  public synchronized Connection connection() {
    return connection;
  }

  // ---------------------------------------------------------------------------------------------------
  // Connection

  /** A call waits for this peer: dial now, unless connected or dialling (cancels a pending reconnect). */
  @Override
  public void connectNow() {
    start();
  }

  @Override
  public String unavailableReason() {
    return lastDialFailure;
  }

  /** Starts connecting if the peer has no connection and is not connecting. */
  public void start() {
    CompletableFuture<Connection> dial;
    synchronized (this) {
      if (closed || connecting != null || connection != null && connection.isActive()) {
        return;
      }
      dial = connectLocked();
    }
    watch(dial);
  }

  /**
   * The connection to call on: at once when there is one, else after dialling (a failed dial fails the
   * future with {@code unavailable}; a closed peer's with core's released error, or says the transport
   * stopped). Send the call with {@link #call}.
   */
  public CompletableFuture<Connection> acquire() {
    CompletableFuture<Connection> f;
    boolean dialled;
    synchronized (this) {
      if (closed) {
        return CompletableFuture.failedFuture(host.isRunning() ? releasedError() : notRunning());
      }
      if (connection != null && connection.isActive()) {
        return CompletableFuture.completedFuture(connection);
      }
      dialled = connecting == null;
      f = connectLocked();
    }
    if (dialled) {
      watch(f);
    }
    return f;
  }

  /** Sets {@code connecting} to a new dial, unless one runs; returns the dial (or a failure). */
  private CompletableFuture<Connection> connectLocked() {
    if (connecting != null) {
      return connecting;
    }
    if (!host.isRunning()) {
      return CompletableFuture.failedFuture(notRunning());
    }
    if (reconnect != null) {
      reconnect.cancel(false);
      reconnect = null;
    }
    CompletableFuture<Connection> f;
    try {
      f = host.dial(identifier());
    } catch (RuntimeException e) {
      f = CompletableFuture.failedFuture(e);
    }
    connecting = f;
    return f;
  }

  private YarpcException notRunning() {
    return YarpcException.of(
        Code.UNAVAILABLE,
        "cannot connect to tchannel peer %s: the transport is not running",
        identifier());
  }

  /**
   * Sends a call on {@code connection} (from {@link #acquire}), unless the peer was released since: then
   * the call fails with core's released error and {@code body} is released. Never concurrently with the
   * release ({@link #beginCall}): a call sent here is on the connection before the release, whose {@link
   * Connection#closeWhenIdle} waits for it. See {@link Connection#call} for the rest.
   */
  public CompletableFuture<Response> call(
      Connection connection, RequestMeta meta, Body body, ChecksumType checksumType) {
    try {
      return beginCall(() -> connection.call(meta, body, checksumType));
    } catch (YarpcException released) { // nothing was sent
      body.release();
      return CompletableFuture.failedFuture(released);
    }
  }

  /** Outside the lock: reports the new status and follows the dial to its end. */
  private void watch(CompletableFuture<Connection> dial) {
    notifySubscribers();
    dial.whenComplete((c, e) -> onDialed(dial, c, e));
  }

  private void onDialed(CompletableFuture<Connection> f, Connection c, Throwable error) {
    boolean closeIt = false;
    synchronized (this) {
      if (connecting == f) {
        connecting = null;
      }
      if (error == null) {
        if (closed || connection != null && connection.isActive() && connection != c) {
          closeIt = true;
        } else {
          adoptLocked(c);
        }
      } else {
        failures++;
        Throwable why = Futures.unwrap(error);
        if (why instanceof YarpcException && TlsErrors.isTls(why)) {
          lastDialFailure = why.getMessage(); // "TLS handshake with peer ... failed: <reason>"
        } else {
          if (why instanceof YarpcException && why.getCause() != null) {
            why = why.getCause(); // the connect error itself, not our wrapping of it
          }
          lastDialFailure = IoErrors.describe(why);
        }
        scheduleReconnectLocked();
      }
    }
    if (closeIt) {
      c.closeWhenIdle(); // calls that waited for this dial are refused (unprocessed), none is cut
    }
    notifySubscribers();
  }

  /**
   * Offers a connection the remote side dialled (an inbound connection whose init advertised this
   * peer's {@code host:port}); the peer uses it when it has no open connection of its own.
   */
  public void offer(Connection c) {
    synchronized (this) {
      if (closed || connection != null && connection.isActive() || !c.isActive()) {
        return;
      }
      adoptLocked(c);
    }
    notifySubscribers();
  }

  private void adoptLocked(Connection c) {
    connection = c;
    failures = 0;
    lastDialFailure = null;
    if (reconnect != null) {
      reconnect.cancel(false);
      reconnect = null;
    }
    c.channel().closeFuture().addListener(x -> onConnectionClosed(c));
  }

  private void onConnectionClosed(Connection c) {
    String keepAliveFailure = KeepAliveHandler.failure(c.channel());
    synchronized (this) {
      if (connection != c) {
        return;
      }
      connection = null;
      if (keepAliveFailure != null) {
        lastDialFailure = "the connection was closed: " + keepAliveFailure;
      }
      scheduleReconnectLocked();
    }
    notifySubscribers();
  }

  private void scheduleReconnectLocked() {
    if (closed || !isRetained() || reconnect != null || !host.isRunning()) {
      return;
    }
    long delay = RECONNECT.delayNanos(Math.min(failures, 64));
    try {
      reconnect =
          host.schedule(
              () -> {
                synchronized (this) {
                  reconnect = null;
                }
                start();
              },
              delay);
    } catch (RuntimeException e) {
      reconnect = null; // the transport is shutting down
    }
  }

  /**
   * Stops reconnecting and closes the peer's own connection once the calls sent on it have ended
   * ({@link Connection#closeWhenIdle}); later calls through the peer fail with {@code unavailable}. The
   * transport's stop closes whatever is still open.
   */
  @Override
  public void close() {
    Connection c;
    synchronized (this) {
      closed = true;
      if (reconnect != null) {
        reconnect.cancel(false);
        reconnect = null;
      }
      c = connection;
      connection = null;
    }
    if (c != null && c.isInitiator()) {
      c.closeWhenIdle();
    }
    notifySubscribers();
  }
}
