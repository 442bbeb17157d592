package io.yarpc.transport.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersDecoder;
import io.netty.handler.codec.http2.DefaultHttp2HeadersEncoder;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersEncoder;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.function.Predicate;

/**
 * A hand-written h2c (prior knowledge) client on a plain socket, for the frames real clients never send:
 * resets in bulk, frames that provoke resets, CONTINUATION floods, header blocks of thousands of indexed
 * fields, zero flow-control windows, stalled bodies. Frames are written as they are asked for and read one
 * by one; header blocks are encoded and decoded with Netty's HPACK coder (one of each per connection, as the
 * protocol requires). Reads wait at most 10 s (a guard against hangs, not a timing assertion).
 */
final class RawH2Client implements AutoCloseable {
  static final int DATA = 0;
  static final int HEADERS = 1;
  static final int RST_STREAM = 3;
  static final int SETTINGS = 4;
  static final int PING = 6;
  static final int GOAWAY = 7;
  static final int WINDOW_UPDATE = 8;
  static final int CONTINUATION = 9;

  static final int END_STREAM = 0x1;
  static final int ACK = 0x1;
  static final int END_HEADERS = 0x4;

  static final int SETTINGS_INITIAL_WINDOW_SIZE = 4;

  static final long NO_ERROR = 0;
  static final long PROTOCOL_ERROR = 1;
  static final long REFUSED_STREAM = 7;
  static final long CANCEL = 8;
  static final long ENHANCE_YOUR_CALM = 0xb;

  /** A frame read from the server; {@code headers} is the decoded block of a HEADERS frame. */
  record Frame(int type, int flags, int stream, byte[] payload, Http2Headers headers) {
    /** RST_STREAM's error code, or GOAWAY's. */
    long errorCode() {
      int at = type == GOAWAY ? 4 : 0;
      return ((payload[at] & 0xffL) << 24)
          | ((payload[at + 1] & 0xffL) << 16)
          | ((payload[at + 2] & 0xffL) << 8)
          | (payload[at + 3] & 0xffL);
    }

    /** The {@code :status} of a HEADERS frame, or 0. */
    int status() {
      CharSequence s = headers == null ? null : headers.status();
      return s == null ? 0 : Integer.parseInt(s.toString());
    }

    boolean endStream() {
      return (type == DATA || type == HEADERS) && (flags & END_STREAM) != 0;
    }

    @Override
    public String toString() {
      return "Frame{type=" + type + ", flags=" + flags + ", stream=" + stream + "}";
    }
  }

  private final Socket socket;
  private final DataInputStream in;
  private final OutputStream out;
  private final DefaultHttp2HeadersEncoder encoder =
      new DefaultHttp2HeadersEncoder(Http2HeadersEncoder.NEVER_SENSITIVE, true);
  private final DefaultHttp2HeadersDecoder decoder =
      new DefaultHttp2HeadersDecoder(false, 1L << 30);
  private final java.util.ArrayDeque<Frame> backlog = new java.util.ArrayDeque<>();
  // flow control of what we send: the server's windows as its SETTINGS and WINDOW_UPDATEs set them
  private long connectionWindow = 65_535;
  private long initialStreamWindow = 65_535;
  private final Map<Integer, Long> streamCredit = new java.util.HashMap<>(); // updates minus sent

  /** Connects and sends the preface with the given SETTINGS (id, value pairs). */
  RawH2Client(int port, int... settings) throws IOException {
    socket = new Socket();
    socket.connect(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), port));
    socket.setSoTimeout(10_000);
    in = new DataInputStream(socket.getInputStream());
    out = socket.getOutputStream();
    out.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    ByteArrayOutputStream s = new ByteArrayOutputStream();
    for (int i = 0; i < settings.length; i += 2) {
      s.write(settings[i] >>> 8);
      s.write(settings[i]);
      writeInt(s, settings[i + 1]);
    }
    frame(SETTINGS, 0, 0, s.toByteArray());
  }

  /** The headers of a YARPC call to {@code procedure} of the test service. */
  static Http2Headers call(String procedure, int contentLength) {
    Http2Headers h =
        new DefaultHttp2Headers()
            .method("POST")
            .scheme("http")
            .path("/")
            .authority("test")
            .add("rpc-caller", "raw-h2")
            .add("rpc-service", YarpcTestService.NAME)
            .add("rpc-procedure", procedure)
            .add("rpc-encoding", "raw")
            .add("context-ttl-ms", "10000");
    if (contentLength >= 0) {
      h.add("content-length", Integer.toString(contentLength));
    }
    return h;
  }

  /** {@code headers} HPACK-encoded with this connection's encoder. */
  byte[] encode(Http2Headers headers) throws Exception {
    ByteBuf buf = Unpooled.buffer();
    try {
      encoder.encodeHeaders(1, headers, buf);
      return ByteBufUtil.getBytes(buf);
    } finally {
      buf.release();
    }
  }

  /** Sends {@code headers} on {@code stream} in one HEADERS frame. */
  RawH2Client headers(int stream, Http2Headers headers, boolean endStream) throws Exception {
    return headers(stream, encode(headers), endStream, true);
  }

  RawH2Client headers(int stream, byte[] block, boolean endStream, boolean endHeaders)
      throws IOException {
    frame(HEADERS, (endStream ? END_STREAM : 0) | (endHeaders ? END_HEADERS : 0), stream, block);
    return this;
  }

  RawH2Client continuation(int stream, byte[] block, boolean endHeaders) throws IOException {
    frame(CONTINUATION, endHeaders ? END_HEADERS : 0, stream, block);
    return this;
  }

  RawH2Client data(int stream, byte[] data, boolean endStream) throws IOException {
    frame(DATA, endStream ? END_STREAM : 0, stream, data);
    connectionWindow -= data.length;
    streamCredit.merge(stream, (long) -data.length, Long::sum);
    return this;
  }

  /** Sends {@code block} on {@code stream} as HEADERS and CONTINUATION frames of at most 16 KiB. */
  RawH2Client headerBlock(int stream, byte[] block, boolean endStream) throws IOException {
    int max = 16 << 10;
    int n = Math.min(max, block.length);
    headers(stream, java.util.Arrays.copyOfRange(block, 0, n), endStream, n == block.length);
    for (int at = n; at < block.length; at += max) {
      int end = Math.min(block.length, at + max);
      continuation(stream, java.util.Arrays.copyOfRange(block, at, end), end == block.length);
    }
    return this;
  }

  /** The bytes the server lets us send on {@code stream} now. */
  long window(int stream) {
    return Math.min(connectionWindow, initialStreamWindow + streamCredit.getOrDefault(stream, 0L));
  }

  /** Reads (keeping what it reads for {@link #read}) until the connection window is at least {@code n}. */
  void awaitConnectionWindow(long n) throws Exception {
    while (connectionWindow < n) {
      Frame f = readFrame();
      if (f == null) {
        throw new IOException("closed while waiting for a connection window of " + n);
      }
      backlog.add(f);
    }
  }

  /** Sends {@code body} on {@code stream} within the server's windows, waiting for credit as needed. */
  void sendData(int stream, byte[] body, boolean endStream) throws Exception {
    int at = 0;
    while (at < body.length) {
      int n = (int) Math.min(16 << 10, Math.min(body.length - at, window(stream)));
      if (n <= 0) {
        Frame f = readFrame();
        if (f == null) {
          throw new IOException("closed while sending on stream " + stream);
        }
        backlog.add(f);
        continue;
      }
      boolean last = at + n == body.length;
      data(stream, java.util.Arrays.copyOfRange(body, at, at + n), endStream && last);
      at += n;
    }
  }

  /**
   * Sends up to {@code perStream} bytes on each of the streams 1, 3, ... ({@code streams} of them), 16 KiB
   * at a time round robin, within the server's windows; returns once nothing may be sent and no credit
   * came for {@code stallMillis} (or all was sent). The bytes sent.
   */
  long sendWhileWindowsAllow(int streams, int perStream, int stallMillis) throws Exception {
    int[] sent = new int[streams];
    long total = 0;
    while (true) {
      boolean any = false;
      for (int i = 0; i < streams; i++) {
        int stream = 1 + 2 * i;
        int n = (int) Math.min(16 << 10, Math.min(perStream - sent[i], window(stream)));
        if (n > 0) {
          data(stream, new byte[n], false);
          sent[i] += n;
          total += n;
          any = true;
        }
      }
      if (total == (long) streams * perStream) {
        return total;
      }
      if (!any) {
        socket.setSoTimeout(stallMillis);
        try {
          Frame f = readFrame();
          if (f == null) {
            return total;
          }
          backlog.add(f);
        } catch (SocketTimeoutException stalled) {
          return total;
        } finally {
          socket.setSoTimeout(10_000);
        }
      }
    }
  }

  RawH2Client rst(int stream, long code) throws IOException {
    ByteArrayOutputStream p = new ByteArrayOutputStream();
    writeInt(p, (int) code);
    frame(RST_STREAM, 0, stream, p.toByteArray());
    return this;
  }

  RawH2Client windowUpdate(int stream, int increment) throws IOException {
    ByteArrayOutputStream p = new ByteArrayOutputStream();
    writeInt(p, increment);
    frame(WINDOW_UPDATE, 0, stream, p.toByteArray());
    return this;
  }

  /** Writes one frame. */
  synchronized void frame(int type, int flags, int stream, byte[] payload) throws IOException {
    out.write(head(type, flags, stream, payload.length));
    out.write(payload);
    out.flush();
  }

  /** The bytes of one frame, for {@link #writeInPieces}. */
  static byte[] frameBytes(int type, int flags, int stream, byte[] payload) {
    byte[] frame =
        java.util.Arrays.copyOf(head(type, flags, stream, payload.length), 9 + payload.length);
    System.arraycopy(payload, 0, frame, 9, payload.length);
    return frame;
  }

  /**
   * Writes {@code bytes} (frames from {@link #frameBytes}, which bypass this client's flow-control
   * accounting) in pieces of {@code sizes} bytes in turn, each sent on its own (no Nagle) after a short
   * pause, so that the server's reads end at all kinds of points inside frames.
   */
  synchronized void writeInPieces(byte[] bytes, int... sizes) throws Exception {
    socket.setTcpNoDelay(true);
    for (int at = 0, i = 0; at < bytes.length; i++) {
      int n = Math.min(sizes[i % sizes.length], bytes.length - at);
      out.write(bytes, at, n);
      out.flush();
      at += n;
      Thread.sleep(2);
    }
  }

  private static byte[] head(int type, int flags, int stream, int length) {
    byte[] head = new byte[9];
    head[0] = (byte) (length >>> 16);
    head[1] = (byte) (length >>> 8);
    head[2] = (byte) length;
    head[3] = (byte) type;
    head[4] = (byte) flags;
    head[5] = (byte) (stream >>> 24);
    head[6] = (byte) (stream >>> 16);
    head[7] = (byte) (stream >>> 8);
    head[8] = (byte) stream;
    return head;
  }

  /** Reads the next frame (answering the server's SETTINGS and PINGs), or null when the server closed. */
  Frame read() throws Exception {
    Frame kept = backlog.poll();
    return kept != null ? kept : readFrame();
  }

  private Frame readFrame() throws Exception {
    while (true) {
      byte[] head = new byte[9];
      try {
        in.readFully(head);
      } catch (EOFException | SocketException e) {
        return null;
      }
      int length = ((head[0] & 0xff) << 16) | ((head[1] & 0xff) << 8) | (head[2] & 0xff);
      int type = head[3] & 0xff;
      int flags = head[4] & 0xff;
      int stream =
          ((head[5] & 0x7f) << 24)
              | ((head[6] & 0xff) << 16)
              | ((head[7] & 0xff) << 8)
              | (head[8] & 0xff);
      byte[] payload = new byte[length];
      try {
        in.readFully(payload);
      } catch (EOFException | SocketException e) {
        return null;
      }
      if (type == SETTINGS && (flags & ACK) == 0) {
        for (int at = 0; at + 6 <= payload.length; at += 6) {
          int id = ((payload[at] & 0xff) << 8) | (payload[at + 1] & 0xff);
          long value =
              ((payload[at + 2] & 0xffL) << 24)
                  | ((payload[at + 3] & 0xffL) << 16)
                  | ((payload[at + 4] & 0xffL) << 8)
                  | (payload[at + 5] & 0xffL);
          if (id == SETTINGS_INITIAL_WINDOW_SIZE) {
            initialStreamWindow = value;
          }
        }
        ack(SETTINGS, new byte[0]);
        continue;
      }
      if (type == WINDOW_UPDATE) {
        long increment =
            ((payload[0] & 0x7fL) << 24)
                | ((payload[1] & 0xffL) << 16)
                | ((payload[2] & 0xffL) << 8)
                | (payload[3] & 0xffL);
        if (stream == 0) {
          connectionWindow += increment;
        } else {
          streamCredit.merge(stream, increment, Long::sum);
        }
      }
      if (type == PING && (flags & ACK) == 0) {
        ack(PING, payload);
        continue;
      }
      Http2Headers headers = null;
      if (type == HEADERS) {
        ByteBuf block = Unpooled.wrappedBuffer(payload);
        try {
          headers = decoder.decodeHeaders(stream, block);
        } finally {
          block.release();
        }
      }
      return new Frame(type, flags, stream, payload, headers);
    }
  }

  /** Acknowledges a SETTINGS or PING frame, unless the server has gone already. */
  private void ack(int type, byte[] payload) {
    try {
      frame(type, ACK, 0, payload);
    } catch (IOException closed) {
      // what is left to read is read all the same
    }
  }

  /** Reads frames until one matches (returned) or the server closes (null). */
  Frame await(Predicate<Frame> match) throws Exception {
    for (Frame f; (f = read()) != null; ) {
      if (match.test(f)) {
        return f;
      }
    }
    return null;
  }

  /** True when the server closed the connection, reading and dropping anything before. */
  boolean closedByServer() throws Exception {
    try {
      while (read() != null) {
        // drop
      }
      return true;
    } catch (SocketTimeoutException e) {
      return false;
    }
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }

  private static void writeInt(ByteArrayOutputStream s, int v) {
    s.write(v >>> 24);
    s.write(v >>> 16);
    s.write(v >>> 8);
    s.write(v);
  }
}
