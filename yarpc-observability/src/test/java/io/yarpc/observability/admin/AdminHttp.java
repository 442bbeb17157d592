package io.yarpc.observability.admin;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/** A bare HTTP/1.1 client over a socket, so tests control every byte sent and see every byte answered. */
final class AdminHttp implements AutoCloseable {
  /** One answer: status, headers (lower-case names) and body. */
  record Answer(int status, Map<String, String> headers, String body) {
    String header(String name) {
      return headers.get(name.toLowerCase(Locale.ROOT));
    }
  }

  private final Socket socket;
  private final InputStream in;
  private final OutputStream out;

  AdminHttp(InetSocketAddress address) throws IOException {
    socket = new Socket();
    socket.connect(address, 5_000);
    socket.setSoTimeout(10_000);
    in = socket.getInputStream();
    out = socket.getOutputStream();
  }

  /** Sends {@code request} as it is (ISO-8859-1 text). */
  AdminHttp send(String request) throws IOException {
    return send(request.getBytes(StandardCharsets.ISO_8859_1));
  }

  AdminHttp send(byte[] request) throws IOException {
    out.write(request);
    out.flush();
    return this;
  }

  /** {@code METHOD path HTTP/1.1} with a Host header and {@code extraHeaders} (each ending in CRLF). */
  static String request(String method, String path, String extraHeaders) {
    return method + " " + path + " HTTP/1.1\r\nHost: admin\r\n" + extraHeaders + "\r\n";
  }

  /** Reads one answer; a body is read by its Content-Length (none for HEAD: {@code head}). */
  Answer read(boolean head) throws IOException {
    String statusLine = line();
    if (statusLine == null) {
      throw new IOException("connection closed before an answer");
    }
    int status = Integer.parseInt(statusLine.split(" ")[1]);
    Map<String, String> headers = new LinkedHashMap<>();
    for (String l = line(); l != null && !l.isEmpty(); l = line()) {
      int colon = l.indexOf(':');
      headers.put(
          l.substring(0, colon).trim().toLowerCase(Locale.ROOT), l.substring(colon + 1).trim());
    }
    int length = head ? 0 : Integer.parseInt(headers.getOrDefault("content-length", "0"));
    byte[] body = in.readNBytes(length);
    return new Answer(status, headers, new String(body, StandardCharsets.UTF_8));
  }

  Answer read() throws IOException {
    return read(false);
  }

  /** Whether the server closed the connection (reads end of stream within 10 s). */
  boolean closedByServer() throws IOException {
    try {
      while (true) {
        int b = in.read();
        if (b < 0) {
          return true;
        }
      }
    } catch (SocketTimeoutException e) {
      return false;
    } catch (IOException e) { // reset
      return true;
    }
  }

  private String line() throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    int c;
    while ((c = in.read()) >= 0) {
      if (c == '\n') {
        String s = b.toString(StandardCharsets.ISO_8859_1);
        return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
      }
      b.write(c);
    }
    return b.size() == 0 ? null : b.toString(StandardCharsets.ISO_8859_1);
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
