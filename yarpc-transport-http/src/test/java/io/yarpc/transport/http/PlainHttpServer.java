package io.yarpc.transport.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.Function;

/**
 * An HTTP/1.1 server written against plain sockets, with no YARPC and no Netty: it records each request
 * exactly as it arrived on the wire (request line, header lines with their casing, body) and answers with
 * whatever bytes the test's responder returns (null: keep the connection open without answering).
 * Connections are kept alive unless the request or the response says otherwise.
 */
final class PlainHttpServer implements AutoCloseable {
  /** A request as received. */
  record Received(String requestLine, List<String> headerLines, byte[] body, int remotePort) {
    /** The value of the first header named {@code name} (case-insensitive), or null. */
    String header(String name) {
      for (String line : headerLines) {
        int colon = line.indexOf(':');
        if (line.substring(0, colon).equalsIgnoreCase(name)) {
          return line.substring(colon + 1).trim();
        }
      }
      return null;
    }

    /** The header names exactly as sent. */
    List<String> headerNames() {
      List<String> names = new ArrayList<>();
      for (String line : headerLines) {
        names.add(line.substring(0, line.indexOf(':')));
      }
      return names;
    }
  }

  private final ServerSocket socket;
  private final Function<Received, byte[]> responder;
  final BlockingQueue<Received> received = new LinkedBlockingQueue<>();
  private final ConcurrentLinkedQueue<Socket> connections = new ConcurrentLinkedQueue<>();
  private final Thread acceptor;
  volatile int connectionsAccepted;

  PlainHttpServer(Function<Received, byte[]> responder) throws IOException {
    this.responder = responder;
    this.socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    this.acceptor = new Thread(this::acceptLoop, "plain-http-server");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /** A response with this status line, headers ({@code "Name: value"}) and body, and Content-Length. */
  static byte[] response(String statusLine, String body, String... headers) {
    StringBuilder sb = new StringBuilder("HTTP/1.1 ").append(statusLine).append("\r\n");
    for (String h : headers) {
      sb.append(h).append("\r\n");
    }
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    sb.append("Content-Length: ").append(b.length).append("\r\n\r\n");
    byte[] head = sb.toString().getBytes(StandardCharsets.ISO_8859_1);
    byte[] out = new byte[head.length + b.length];
    System.arraycopy(head, 0, out, 0, head.length);
    System.arraycopy(b, 0, out, head.length, b.length);
    return out;
  }

  String hostPort() {
    return "127.0.0.1:" + socket.getLocalPort();
  }

  int port() {
    return socket.getLocalPort();
  }

  private void acceptLoop() {
    while (!socket.isClosed()) {
      try {
        Socket s = socket.accept();
        connectionsAccepted++;
        connections.add(s);
        Thread t = new Thread(() -> serve(s), "plain-http-connection");
        t.setDaemon(true);
        t.start();
      } catch (IOException e) {
        return;
      }
    }
  }

  private void serve(Socket s) {
    try (s) {
      InputStream in = s.getInputStream();
      OutputStream out = s.getOutputStream();
      while (true) {
        String head = readHead(in);
        if (head == null) {
          return;
        }
        String[] lines = head.split("\r\n");
        List<String> headerLines = new ArrayList<>(List.of(lines).subList(1, lines.length));
        int length = 0;
        boolean close = false;
        for (String line : headerLines) {
          String lower = line.toLowerCase(Locale.ROOT);
          if (lower.startsWith("content-length:")) {
            length = Integer.parseInt(line.substring(15).trim());
          } else if (lower.startsWith("connection:") && lower.contains("close")) {
            close = true;
          }
        }
        byte[] body = in.readNBytes(length);
        Received r = new Received(lines[0], headerLines, body, s.getPort());
        received.add(r);
        byte[] answer = responder.apply(r);
        if (answer == null) {
          // never answer: wait until the client goes away
          while (in.read() >= 0) {
            // discard
          }
          return;
        }
        out.write(answer);
        out.flush();
        String answerText =
            new String(answer, StandardCharsets.ISO_8859_1).toLowerCase(Locale.ROOT);
        if (close || answerText.contains("\r\nconnection: close\r\n")) {
          return;
        }
      }
    } catch (IOException ignored) {
      // client went away
    }
  }

  private static String readHead(InputStream in) throws IOException {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    int state = 0;
    while (state < 4) {
      int b = in.read();
      if (b < 0) {
        return null;
      }
      buf.write(b);
      state =
          (b == '\r' && (state == 0 || state == 2)) || (b == '\n' && (state == 1 || state == 3))
              ? state + 1
              : 0;
    }
    String s = buf.toString(StandardCharsets.ISO_8859_1);
    return s.substring(0, s.length() - 4);
  }

  /** Closes every open connection abruptly (the listening socket stays open). */
  void dropConnections() throws IOException {
    for (Socket s; (s = connections.poll()) != null; ) {
      s.close();
    }
  }

  @Override
  public void close() throws IOException {
    socket.close();
    dropConnections();
  }
}
