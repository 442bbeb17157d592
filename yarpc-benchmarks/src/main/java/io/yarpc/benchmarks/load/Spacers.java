package io.yarpc.benchmarks.load;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

/**
 * Idle TCP connections to a server, opened to shift the round-robin event-loop assignment of the
 * connections that follow (see {@link EchoSystem#start(int)}); closed with the system.
 */
final class Spacers implements AutoCloseable {
  private final List<Socket> sockets = new ArrayList<>();

  /** Opens {@code n} connections to {@code 127.0.0.1:port} and gives the server time to accept them. */
  void open(int n, int port) throws IOException, InterruptedException {
    for (int i = 0; i < n; i++) {
      Socket s = new Socket();
      s.connect(new InetSocketAddress("127.0.0.1", port), 2000);
      sockets.add(s);
    }
    if (n > 0) {
      Thread.sleep(100); // the server registers the accepted channels on its loops asynchronously
    }
  }

  @Override
  public void close() {
    for (Socket s : sockets) {
      try {
        s.close();
      } catch (IOException ignored) {
        // an idle spacer; nothing to do
      }
    }
    sockets.clear();
  }
}
