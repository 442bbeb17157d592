package io.yarpc.testing;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link TcpProxy} over real loopback sockets, in front of an echo server. */
@Timeout(30)
class TcpProxyTest {
  private ServerSocket echo;
  private TcpProxy proxy;

  @BeforeEach
  void startEchoServer() throws IOException {
    echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread t =
        new Thread(
            () -> {
              while (true) {
                Socket s;
                try {
                  s = echo.accept();
                } catch (IOException e) {
                  return;
                }
                Thread c = new Thread(() -> echoAll(s));
                c.setDaemon(true);
                c.start();
              }
            });
    t.setDaemon(true);
    t.start();
    proxy = TcpProxy.start((InetSocketAddress) echo.getLocalSocketAddress());
  }

  private static void echoAll(Socket s) {
    try (s) {
      InputStream in = s.getInputStream();
      OutputStream out = s.getOutputStream();
      byte[] b = new byte[1024];
      int n;
      while ((n = in.read(b)) >= 0) {
        out.write(b, 0, n);
      }
    } catch (IOException ignored) {
      // the client went away
    }
  }

  @AfterEach
  void stop() throws IOException {
    proxy.close();
    echo.close();
  }

  private Socket connect() throws IOException {
    Socket s = new Socket();
    s.connect(proxy.address(), 5_000);
    s.setSoTimeout(5_000);
    return s;
  }

  private static String roundTrip(Socket s, String text) throws IOException {
    s.getOutputStream().write(text.getBytes(US_ASCII));
    return new String(s.getInputStream().readNBytes(text.length()), US_ASCII);
  }

  @Test
  void forwardsBothWaysOnLoopback() throws IOException {
    assertThat(proxy.address().getAddress().isLoopbackAddress()).isTrue();
    assertThat(proxy.hostPort()).isEqualTo("127.0.0.1:" + proxy.address().getPort());
    try (Socket a = connect();
        Socket b = connect()) {
      assertThat(roundTrip(a, "hello")).isEqualTo("hello");
      assertThat(roundTrip(b, "world")).isEqualTo("world");
    }
    assertThat(proxy.acceptedConnections()).isEqualTo(2);
  }

  @Test
  void blackHoleKeepsConnectionsOpenAndForwardsNothingUntilResumed() throws IOException {
    try (Socket open = connect()) {
      assertThat(roundTrip(open, "before")).isEqualTo("before");
      proxy.blackHole();
      assertThat(proxy.isBlackHoled()).isTrue();
      open.getOutputStream().write("held".getBytes(US_ASCII));
      open.setSoTimeout(300);
      assertThatThrownBy(() -> open.getInputStream().read())
          .isInstanceOf(SocketTimeoutException.class);

      // a new connection is accepted, but gets nothing back either
      try (Socket late = connect()) {
        late.getOutputStream().write("late".getBytes(US_ASCII));
        late.setSoTimeout(300);
        assertThatThrownBy(() -> late.getInputStream().read())
            .isInstanceOf(SocketTimeoutException.class);
        assertThat(proxy.acceptedConnections()).isEqualTo(2);

        proxy.forward();
        open.setSoTimeout(5_000);
        late.setSoTimeout(5_000);
        assertThat(new String(open.getInputStream().readNBytes(4), US_ASCII)).isEqualTo("held");
        assertThat(new String(late.getInputStream().readNBytes(4), US_ASCII)).isEqualTo("late");
        assertThat(roundTrip(open, "after")).isEqualTo("after");
      }
    }
  }

  @Test
  void aCloseIsPassedOnWhenForwardingButNotWhileBlackHoled() throws IOException {
    try (Socket s = connect()) {
      s.shutdownOutput(); // the echo server sees the end and closes its side
      assertThat(s.getInputStream().read()).isEqualTo(-1);
    }
    try (Socket s = connect()) {
      assertThat(roundTrip(s, "x")).isEqualTo("x");
      proxy.blackHole();
      s.shutdownOutput();
      s.setSoTimeout(300);
      assertThatThrownBy(() -> s.getInputStream().read())
          .isInstanceOf(SocketTimeoutException.class);
    }
  }

  @Test
  void closeEndsEveryConnection() throws IOException {
    try (Socket s = connect()) {
      assertThat(roundTrip(s, "x")).isEqualTo("x");
      proxy.blackHole();
      proxy.close();
      assertThat(s.getInputStream().read()).isEqualTo(-1);
      int port = proxy.address().getPort();
      try (Socket refused = new Socket()) {
        refused.connect(proxy.address(), 1_000);
        // Nothing listens: the only connection Linux can make is TCP's self-connection, when the
        // port it picks for this socket is the closed proxy's own (an ephemeral port too)
        assertThat(refused.getLocalPort()).as("connected to the closed proxy").isEqualTo(port);
      } catch (ConnectException expected) {
        // refused: nothing listens any more
      }
    }
  }
}
