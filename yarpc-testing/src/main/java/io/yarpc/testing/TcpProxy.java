package io.yarpc.testing;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy on loopback for tests of what a client does when the network between it and a server
 * fails: each connection accepted on {@link #address()} (127.0.0.1, a free port) is connected to the
 * target, and bytes are forwarded both ways, as they come, until either side closes.
 *
 * <p>{@link #blackHole()} makes it a silent failure, as a host that vanished or a path that drops every
 * packet: connections stay open and nothing is forwarded in either direction, not even a close; new
 * connections are still accepted (and connected to the target), so a client's connect succeeds but
 * nothing it sends gets an answer. {@link #forward()} resumes forwarding: what was held is delivered in
 * order, nothing is lost.
 *
 * <pre>{@code
 * try (TcpProxy proxy = TcpProxy.start(serverAddress)) {
 *   ... a client calls proxy.hostPort() ...
 *   proxy.blackHole();
 *   ... the client must notice the dead connection ...
 * }
 * }</pre>
 *
 * <p>Blocking sockets, two daemon threads per connection; {@link #close()} closes the listener and every
 * connection. Thread-safe.
 */
public final class TcpProxy implements AutoCloseable {
  private static final AtomicInteger PROXIES = new AtomicInteger();

  private final InetSocketAddress target;
  private final ServerSocket listener;
  private final Thread acceptor;
  private final String name;
  private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
  private final AtomicInteger accepted = new AtomicInteger();
  private final AtomicInteger forwarding = new AtomicInteger();
  private final Object gate = new Object();
  private boolean blackHoled; // guarded by gate
  private boolean closed; // guarded by gate

  private TcpProxy(InetSocketAddress target) throws IOException {
    this.target = target;
    this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    this.name = "yarpc-tcp-proxy-" + PROXIES.incrementAndGet();
    this.acceptor = new Thread(this::acceptLoop, name + "-accept");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /**
   * A proxy forwarding to {@code target}, listening on 127.0.0.1.
   *
   * @throws IOException when it cannot listen
   */
  public static TcpProxy start(InetSocketAddress target) throws IOException {
    return new TcpProxy(requireNonNull(target, "target"));
  }

  /** Where clients connect: 127.0.0.1 and the proxy's port. */
  public InetSocketAddress address() {
    return new InetSocketAddress(listener.getInetAddress(), listener.getLocalPort());
  }

  /** {@link #address()} as {@code 127.0.0.1:port}, a peer identifier. */
  public String hostPort() {
    return listener.getInetAddress().getHostAddress() + ":" + listener.getLocalPort();
  }

  /** How many connections the proxy has accepted so far. */
  public int acceptedConnections() {
    return accepted.get();
  }

  /**
   * How many connections are open now: accepted (connecting to the target or connected) and not yet
   * closed in both directions. A client that closes its end, and a server that then closes its own,
   * takes one off.
   */
  public int openConnections() {
    return forwarding.get();
  }

  /** Stops forwarding in both directions; connections stay open and new ones are accepted. */
  public void blackHole() {
    synchronized (gate) {
      blackHoled = true;
    }
  }

  /** Forwards again, first what was held while black-holed. */
  public void forward() {
    synchronized (gate) {
      blackHoled = false;
      gate.notifyAll();
    }
  }

  /** Whether the proxy is black-holing. */
  public boolean isBlackHoled() {
    synchronized (gate) {
      return blackHoled;
    }
  }

  /**
   * Stops listening and closes every connection, both sides. Once it returns, a connect to {@link
   * #address()} is refused (unless something else took the port since).
   */
  @Override
  public void close() {
    synchronized (gate) {
      closed = true;
      gate.notifyAll();
    }
    closeQuietly(listener);
    // The JDK closes a listening socket for good only when the thread blocked in its accept has
    // left
    // it: until then the kernel still completes connections (and resets them after).
    try {
      acceptor.join(10_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    for (Socket s : sockets) {
      closeQuietly(s);
    }
  }

  @Override
  public String toString() {
    return "TcpProxy{"
        + hostPort()
        + " -> "
        + target
        + (isBlackHoled() ? ", black hole" : "")
        + "}";
  }

  private void acceptLoop() {
    while (true) {
      Socket client;
      try {
        client = listener.accept();
      } catch (IOException e) {
        return; // closed
      }
      accepted.incrementAndGet();
      forwarding.incrementAndGet();
      sockets.add(client);
      Thread t = new Thread(() -> connect(client), name + "-connect");
      t.setDaemon(true);
      t.start();
    }
  }

  private void connect(Socket client) {
    Socket server = new Socket();
    sockets.add(server);
    try {
      server.connect(target, 10_000);
      client.setTcpNoDelay(true);
      server.setTcpNoDelay(true);
    } catch (IOException e) {
      closeQuietly(client);
      closeQuietly(server);
      forwarding.decrementAndGet();
      return;
    }
    AtomicInteger open = new AtomicInteger(2);
    pump(client, server, open, "up");
    pump(server, client, open, "down");
  }

  /** Copies {@code from} to {@code to} on a thread of its own, holding each chunk while black-holed. */
  private void pump(Socket from, Socket to, AtomicInteger open, String direction) {
    Thread t =
        new Thread(
            () -> {
              byte[] buffer = new byte[16 * 1024];
              try {
                InputStream in = from.getInputStream();
                OutputStream out = to.getOutputStream();
                while (true) {
                  int n = in.read(buffer);
                  if (!awaitForwarding()) {
                    break;
                  }
                  if (n < 0) {
                    to.shutdownOutput(); // pass the close on
                    break;
                  }
                  out.write(buffer, 0, n);
                  out.flush();
                }
              } catch (IOException e) {
                closeQuietly(from); // a reset or a closed socket: end the connection both ways
                closeQuietly(to);
              }
              if (open.decrementAndGet() == 0) {
                closeQuietly(from);
                closeQuietly(to);
                forwarding.decrementAndGet();
              }
            },
            name + "-" + direction);
    t.setDaemon(true);
    t.start();
  }

  /** Waits while black-holed; false once the proxy is closed. */
  private boolean awaitForwarding() {
    synchronized (gate) {
      while (blackHoled && !closed) {
        try {
          gate.wait();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return false;
        }
      }
      return !closed;
    }
  }

  private void closeQuietly(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception ignored) {
      // closing anyway
    }
    if (c instanceof Socket s) {
      sockets.remove(s);
    }
  }
}
