package io.yarpc.transport.http;

import static org.assertj.core.api.Assertions.fail;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * A hand-written HTTP/1.1 client on a plain socket, for the inputs real clients never send: stalls,
 * garbage, oversized parts, pipelining, disconnects. Reads wait at most 10 s (a guard against hangs, not
 * a timing assertion).
 */
final class RawClient implements AutoCloseable {
  /** A parsed response: status, headers by lower-case name, body. */
  record Res(int status, Map<String, String> headers, String body) {}

  private final Socket socket;
  private final InputStream in;
  private final OutputStream out;

  RawClient(int port) throws IOException {
    this(port, 0);
  }

  /** A client whose socket receives into a buffer of {@code receiveBuffer} bytes (0: the default). */
  RawClient(int port, int receiveBuffer) throws IOException {
    this(open(port, receiveBuffer));
  }

  /** A client on a socket that is connected already (a TLS socket, for one). */
  RawClient(Socket connected) throws IOException {
    socket = connected;
    socket.setSoTimeout(10_000);
    in = socket.getInputStream();
    out = socket.getOutputStream();
  }

  private static Socket open(int port, int receiveBuffer) throws IOException {
    Socket s = new Socket();
    if (receiveBuffer > 0) {
      s.setReceiveBufferSize(receiveBuffer);
    }
    s.connect(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), port));
    return s;
  }

  static String request(String procedure, int contentLength, String... extraHeaders) {
    StringBuilder sb =
        new StringBuilder(
            "POST / HTTP/1.1\r\nHost: test\r\nRpc-Caller: raw-client\r\n"
                + "Rpc-Service: "
                + YarpcTestService.NAME
                + "\r\nRpc-Procedure: "
                + procedure
                + "\r\n"
                + "Rpc-Encoding: raw\r\nContext-TTL-MS: 10000\r\n");
    if (contentLength >= 0) {
      sb.append("Content-Length: ").append(contentLength).append("\r\n");
    }
    for (String h : extraHeaders) {
      sb.append(h).append("\r\n");
    }
    return sb.append("\r\n").toString();
  }

  RawClient send(String text) throws IOException {
    return send(text.getBytes(StandardCharsets.ISO_8859_1));
  }

  RawClient send(byte[] bytes) throws IOException {
    out.write(bytes);
    out.flush();
    return this;
  }

  /** Reads one response (Content-Length bodies only). */
  Res read() throws IOException {
    String head = readHead();
    if (head == null) {
      return fail("connection closed before a response");
    }
    String[] lines = head.split("\r\n");
    int status = Integer.parseInt(lines[0].split(" ")[1]);
    Map<String, String> headers = new LinkedHashMap<>();
    for (int i = 1; i < lines.length; i++) {
      int colon = lines[i].indexOf(':');
      headers.put(
          lines[i].substring(0, colon).toLowerCase(Locale.ROOT),
          lines[i].substring(colon + 1).trim());
    }
    String length = headers.get("content-length");
    byte[] body = length == null ? new byte[0] : in.readNBytes(Integer.parseInt(length));
    return new Res(status, headers, new String(body, StandardCharsets.UTF_8));
  }

  /** Reads only a response head (status line and headers). */
  String readHead() throws IOException {
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

  /** Reads {@code n} bytes. */
  byte[] readBytes(int n) throws IOException {
    return in.readNBytes(n);
  }

  /** True when the server closed the connection (end of stream or reset), reading and dropping anything before. */
  boolean closedByServer() throws IOException {
    try {
      byte[] drop = new byte[64 << 10];
      while (in.read(drop) >= 0) {
        // drop
      }
      return true;
    } catch (SocketTimeoutException e) {
      return false;
    } catch (SocketException e) {
      return true; // reset
    }
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
