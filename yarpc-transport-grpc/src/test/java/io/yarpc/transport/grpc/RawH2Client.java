package io.yarpc.transport.grpc;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersDecoder;
import io.netty.handler.codec.http2.DefaultHttp2HeadersEncoder;
import io.netty.handler.codec.http2.Http2Exception;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersEncoder;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * A hand-written HTTP/2 client over a blocking socket, for attack tests: it sends whatever frames a test
 * asks for (streams it resets at once, zero window increments, endless CONTINUATION frames, partial
 * messages, more streams than allowed) and records what the server answers (settings, headers per stream,
 * data bytes, {@code RST_STREAM} codes, {@code GOAWAY}, the connection's end). Its own data respects the
 * server's flow-control windows; it grants the server window only when told to ({@link #autoWindow}).
 */
final class RawH2Client implements AutoCloseable {
  static final int DATA = 0x0;
  static final int HEADERS = 0x1;
  static final int RST_STREAM = 0x3;
  static final int SETTINGS = 0x4;
  static final int PING = 0x6;
  static final int GOAWAY = 0x7;
  static final int WINDOW_UPDATE = 0x8;
  static final int CONTINUATION = 0x9;

  static final int FLAG_END_STREAM = 0x1;
  static final int FLAG_ACK = 0x1;
  static final int FLAG_END_HEADERS = 0x4;

  static final long NO_ERROR = 0x0;
  static final long PROTOCOL_ERROR = 0x1;
  static final long CANCEL = 0x8;
  static final long REFUSED_STREAM = 0x7;
  static final long ENHANCE_YOUR_CALM = 0xb;

  static final int SETTINGS_MAX_CONCURRENT_STREAMS = 0x3;
  static final int SETTINGS_INITIAL_WINDOW_SIZE = 0x4;
  static final int SETTINGS_MAX_HEADER_LIST_SIZE = 0x6;

  private static final byte[] PREFACE =
      "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
  private static final int MAX_FRAME = 16_384;
  private static final long WAIT_NANOS = TimeUnit.SECONDS.toNanos(10);

  /** What the server's GOAWAY said. */
  record GoAway(int lastStreamId, long errorCode, String debug) {}

  private final Socket socket;
  private final OutputStream out;
  private final DataInputStream in;
  private final Thread reader;
  private final DefaultHttp2HeadersEncoder encoder =
      new DefaultHttp2HeadersEncoder(Http2HeadersEncoder.NEVER_SENSITIVE, true);
  private final DefaultHttp2HeadersDecoder decoder = new DefaultHttp2HeadersDecoder(false, 1 << 20);
  private final CountDownLatch settingsReceived = new CountDownLatch(1);
  private final CountDownLatch ended = new CountDownLatch(1);
  private final Object windows = new Object();

  final Map<Integer, Long> serverSettings = new ConcurrentHashMap<>();
  final Map<Integer, List<Http2Headers>> headers = new ConcurrentHashMap<>();
  final Map<Integer, Long> resets = new ConcurrentHashMap<>();
  final Map<Integer, AtomicLong> dataBytes = new ConcurrentHashMap<>();
  final List<GoAway> goAways = new CopyOnWriteArrayList<>();
  final AtomicInteger pingAcks = new AtomicInteger();
  volatile boolean autoWindow = true;

  private long connectionWindow = 65_535; // guarded by windows: what we may still send
  private final Map<Integer, Long> streamWindows = new ConcurrentHashMap<>(); // guarded by windows
  private long initialStreamWindow = 65_535; // guarded by windows
  private int nextStreamId = 1;
  private volatile IOException writeFailure;
  private boolean prefaceSent; // guarded by this
  private boolean settingsToAck; // guarded by this: the server's settings came before our preface
  private volatile Exception readFailure;

  private RawH2Client(Socket socket) throws IOException {
    this.socket = socket;
    this.out = socket.getOutputStream();
    this.in = new DataInputStream(socket.getInputStream());
    this.reader = new Thread(this::read, "raw-h2-reader");
    this.reader.setDaemon(true);
  }

  /**
   * A connection to {@code port} on loopback that sent the preface and {@code settings} (id to value),
   * and waited for the server's settings.
   */
  static RawH2Client connect(int port, Map<Integer, Long> settings) throws IOException {
    RawH2Client c = open(port);
    c.preface(settings);
    c.awaitSettings();
    return c;
  }

  /** A TCP connection to {@code port} that sent nothing yet. */
  static RawH2Client open(int port) throws IOException {
    Socket s = new Socket(InetAddress.getLoopbackAddress(), port);
    s.setTcpNoDelay(true);
    RawH2Client c = new RawH2Client(s);
    c.reader.start();
    return c;
  }

  /**
   * Sends the client preface and a SETTINGS frame with {@code settings}, then acknowledges the server's
   * settings if they came first (nothing may precede the preface).
   */
  void preface(Map<Integer, Long> settings) {
    ByteBuffer payload = ByteBuffer.allocate(6 * settings.size());
    settings.forEach((id, value) -> payload.putShort(id.shortValue()).putInt(value.intValue()));
    synchronized (this) {
      write(PREFACE);
      frame(SETTINGS, 0, 0, payload.array());
      prefaceSent = true;
      if (settingsToAck) {
        frame(SETTINGS, FLAG_ACK, 0, new byte[0]);
      }
    }
    Long window = settings.get(SETTINGS_INITIAL_WINDOW_SIZE);
    if (window != null && window == 0) {
      autoWindow = false;
    }
  }

  void awaitSettings() {
    try {
      if (!settingsReceived.await(WAIT_NANOS, TimeUnit.NANOSECONDS)) {
        throw new AssertionError("no SETTINGS from the server");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  /** The id of the next stream {@link #request} opens. */
  synchronized int nextStreamId() {
    return nextStreamId;
  }

  /** The headers of a gRPC request for {@code procedure} (a plain client's: no deadline) plus extras. */
  static Http2Headers grpcHeaders(String procedure, Map<String, String> extra) {
    Http2Headers h =
        new DefaultHttp2Headers()
            .method("POST")
            .scheme("http")
            .path("/__default__/" + procedure)
            .authority("localhost")
            .add("content-type", "application/grpc")
            .add("te", "trailers")
            .add("rpc-encoding", "raw");
    extra.forEach(h::add);
    return h;
  }

  /** Opens a stream with {@code h} in one HEADERS frame; returns its id. */
  int request(Http2Headers h, boolean endStream) {
    synchronized (this) {
      int id = nextStreamId;
      nextStreamId += 2;
      synchronized (windows) {
        streamWindows.put(id, initialStreamWindow);
      }
      frame(HEADERS, FLAG_END_HEADERS | (endStream ? FLAG_END_STREAM : 0), id, headerBlock(id, h));
      return id;
    }
  }

  /** Opens a stream with a HEADERS frame that does not end the header block; returns its id. */
  int requestWithoutEndHeaders(Http2Headers h) {
    synchronized (this) {
      int id = nextStreamId;
      nextStreamId += 2;
      frame(HEADERS, 0, id, headerBlock(id, h));
      return id;
    }
  }

  /** The HPACK block of {@code h} (the encoder's state moves on: send it). */
  synchronized byte[] headerBlock(int streamId, Http2Headers h) {
    ByteBuf buf = Unpooled.buffer();
    try {
      encoder.encodeHeaders(streamId, h, buf);
      byte[] bytes = new byte[buf.readableBytes()];
      buf.readBytes(bytes);
      return bytes;
    } catch (Http2Exception e) {
      throw new AssertionError(e);
    } finally {
      buf.release();
    }
  }

  /**
   * Sends the start of a gRPC message on {@code streamId}: the 5-byte prefix announcing {@code declared}
   * bytes, then {@code sent} of them; waits for flow-control window as needed.
   */
  void partialMessage(int streamId, int declared, int sent, boolean endStream) {
    byte[] payload = new byte[5 + sent];
    ByteBuffer.wrap(payload).put((byte) 0).putInt(declared);
    data(streamId, payload, endStream);
  }

  /** Sends one complete gRPC message with {@code body} on {@code streamId}. */
  void message(int streamId, byte[] body, boolean endStream) {
    byte[] payload = new byte[5 + body.length];
    ByteBuffer.wrap(payload).put((byte) 0).putInt(body.length).put(body);
    data(streamId, payload, endStream);
  }

  /**
   * Sends {@code payload} as DATA frames on {@code streamId}, within the server's windows; stops early
   * when the server resets the stream.
   */
  void data(int streamId, byte[] payload, boolean endStream) {
    int off = 0;
    do {
      int n = Math.min(MAX_FRAME, payload.length - off);
      n = takeWindow(streamId, n);
      if (n < 0) {
        return;
      }
      byte[] chunk = new byte[n];
      System.arraycopy(payload, off, chunk, 0, n);
      off += n;
      boolean last = off == payload.length;
      synchronized (this) {
        frame(DATA, last && endStream ? FLAG_END_STREAM : 0, streamId, chunk);
      }
    } while (off < payload.length);
  }

  /** Takes up to {@code wanted} bytes of window; -1 once the server reset the stream. */
  private int takeWindow(int streamId, int wanted) {
    if (wanted == 0) {
      return 0;
    }
    long giveUp = System.nanoTime() + WAIT_NANOS;
    synchronized (windows) {
      while (true) {
        if (resets.containsKey(streamId)) {
          return -1;
        }
        long stream = streamWindows.getOrDefault(streamId, initialStreamWindow);
        long n = Math.min(wanted, Math.min(stream, connectionWindow));
        if (n > 0) {
          connectionWindow -= n;
          streamWindows.put(streamId, stream - n);
          return (int) n;
        }
        long left = giveUp - System.nanoTime();
        if (left <= 0 || ended.getCount() == 0) {
          throw new AssertionError("no flow-control window from the server for stream " + streamId);
        }
        try {
          windows.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new AssertionError(e);
        }
      }
    }
  }

  void ping() {
    frame(PING, 0, 0, new byte[8]);
  }

  void rst(int streamId, long code) {
    frame(RST_STREAM, 0, streamId, ByteBuffer.allocate(4).putInt((int) code).array());
  }

  void windowUpdate(int streamId, int increment) {
    frame(WINDOW_UPDATE, 0, streamId, ByteBuffer.allocate(4).putInt(increment).array());
  }

  void continuation(int streamId, byte[] fragment, boolean endHeaders) {
    frame(CONTINUATION, endHeaders ? FLAG_END_HEADERS : 0, streamId, fragment);
  }

  /** Writes one frame; a write the server no longer takes is remembered, not thrown. */
  synchronized void frame(int type, int flags, int streamId, byte[] payload) {
    byte[] f = new byte[9 + payload.length];
    ByteBuffer.wrap(f)
        .put((byte) (payload.length >>> 16))
        .put((byte) (payload.length >>> 8))
        .put((byte) payload.length)
        .put((byte) type)
        .put((byte) flags)
        .putInt(streamId)
        .put(payload);
    write(f);
  }

  private synchronized void write(byte[] bytes) {
    if (writeFailure != null) {
      return;
    }
    try {
      out.write(bytes);
    } catch (IOException e) {
      writeFailure = e;
    }
  }

  /** Whether a write failed (the server closed the connection). */
  boolean writeFailed() {
    return writeFailure != null;
  }

  @Override
  public String toString() {
    return "RawH2Client{ended="
        + ended()
        + ", goAways="
        + goAways
        + ", resets="
        + resets
        + ", streamsWithHeaders="
        + headers.keySet()
        + ", readFailure="
        + readFailure
        + ", writeFailure="
        + writeFailure
        + "}";
  }

  /** Whether the server ended the connection (end of input or a reset). */
  boolean ended() {
    return ended.getCount() == 0;
  }

  /** Waits for the server to end the connection. */
  boolean awaitEnd(Duration timeout) throws InterruptedException {
    return ended.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
  }

  /** The first GOAWAY, once one arrived; waits at most 10 s. */
  GoAway awaitGoAway() throws InterruptedException {
    await("a GOAWAY", () -> !goAways.isEmpty());
    return goAways.get(0);
  }

  /** The last headers (the trailers, or a trailers-only response) the server sent on a stream. */
  Http2Headers lastHeaders(int streamId) {
    List<Http2Headers> list = headers.get(streamId);
    return list == null || list.isEmpty() ? null : list.get(list.size() - 1);
  }

  /** The grpc-status the server ended {@code streamId} with, or null. */
  Integer grpcStatus(int streamId) {
    Http2Headers h = lastHeaders(streamId);
    CharSequence s = h == null ? null : h.get("grpc-status");
    return s == null ? null : Integer.parseInt(s.toString());
  }

  String grpcMessage(int streamId) {
    Http2Headers h = lastHeaders(streamId);
    CharSequence s = h == null ? null : h.get("grpc-message");
    return s == null ? null : s.toString();
  }

  /** Waits (at most 10 s) for a condition the reader makes true. */
  static void await(String what, BooleanSupplier condition) throws InterruptedException {
    await(() -> what, condition);
  }

  /** Waits (at most 10 s) for a condition; {@code what} describes it when the wait gives up. */
  static void await(java.util.function.Supplier<String> what, BooleanSupplier condition)
      throws InterruptedException {
    long giveUp = System.nanoTime() + WAIT_NANOS;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - giveUp > 0) {
        throw new AssertionError("gave up waiting for " + what.get());
      }
      Thread.sleep(5);
    }
  }

  /** Waits (at most 10 s) for a condition about this connection; says what it saw if it gives up. */
  void waitFor(String what, BooleanSupplier condition) throws InterruptedException {
    await(() -> what + " on " + this, condition);
  }

  @Override
  public void close() throws IOException {
    socket.close();
    try {
      reader.join(TimeUnit.NANOSECONDS.toMillis(WAIT_NANOS));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  // ---- the reader

  private void read() {
    try {
      ByteArrayOutputStream block = null;
      int blockStream = 0;
      while (true) {
        int length = (in.readUnsignedByte() << 16) | in.readUnsignedShort();
        int type = in.readUnsignedByte();
        int flags = in.readUnsignedByte();
        int streamId = in.readInt() & 0x7fffffff;
        byte[] payload = new byte[length];
        in.readFully(payload);
        ByteBuffer p = ByteBuffer.wrap(payload);
        switch (type) {
          case SETTINGS -> {
            if ((flags & FLAG_ACK) == 0) {
              settings(p);
              synchronized (this) {
                if (prefaceSent) {
                  frame(SETTINGS, FLAG_ACK, 0, new byte[0]);
                } else {
                  settingsToAck = true; // the server speaks first; our preface acknowledges them
                }
              }
              settingsReceived.countDown();
            }
          }
          case PING -> {
            if ((flags & FLAG_ACK) == 0) {
              frame(PING, FLAG_ACK, 0, payload);
            } else {
              pingAcks.incrementAndGet();
            }
          }
          case HEADERS, CONTINUATION -> {
            if (type == HEADERS) {
              block = new ByteArrayOutputStream();
              blockStream = streamId;
              int pad = (flags & 0x8) != 0 ? p.get() & 0xff : 0;
              if ((flags & 0x20) != 0) {
                p.position(p.position() + 5);
              }
              block.write(payload, p.position(), payload.length - p.position() - pad);
            } else if (block != null) {
              block.write(payload, 0, payload.length);
            }
            if ((flags & FLAG_END_HEADERS) != 0 && block != null) {
              decodeHeaders(blockStream, block.toByteArray());
              block = null;
            }
          }
          case DATA -> {
            dataBytes.computeIfAbsent(streamId, k -> new AtomicLong()).addAndGet(length);
            if (autoWindow && length > 0) {
              windowUpdate(0, length);
              windowUpdate(streamId, length);
            }
          }
          case RST_STREAM -> {
            resets.putIfAbsent(streamId, p.getInt() & 0xffffffffL);
            synchronized (windows) {
              windows.notifyAll();
            }
          }
          case GOAWAY -> {
            int last = p.getInt() & 0x7fffffff;
            long code = p.getInt() & 0xffffffffL;
            String debug = new String(payload, 8, payload.length - 8, StandardCharsets.UTF_8);
            goAways.add(new GoAway(last, code, debug));
          }
          case WINDOW_UPDATE -> {
            long increment = p.getInt() & 0x7fffffffL;
            synchronized (windows) {
              if (streamId == 0) {
                connectionWindow += increment;
              } else {
                streamWindows.merge(streamId, increment, Long::sum);
              }
              windows.notifyAll();
            }
          }
          default -> {}
        }
      }
    } catch (EOFException | java.net.SocketException e) {
      // the connection ended
    } catch (IOException | RuntimeException e) {
      readFailure = e; // the connection ended badly; tests look at what was recorded
    } finally {
      ended.countDown();
      synchronized (windows) {
        windows.notifyAll();
      }
    }
  }

  private void settings(ByteBuffer p) {
    while (p.remaining() >= 6) {
      int id = p.getShort() & 0xffff;
      long value = p.getInt() & 0xffffffffL;
      serverSettings.put(id, value);
      if (id == SETTINGS_INITIAL_WINDOW_SIZE) {
        synchronized (windows) {
          long delta = value - initialStreamWindow;
          initialStreamWindow = value;
          streamWindows.replaceAll((k, v) -> v + delta);
          windows.notifyAll();
        }
      }
    }
  }

  private void decodeHeaders(int streamId, byte[] block) {
    ByteBuf buf = Unpooled.wrappedBuffer(block);
    try {
      Http2Headers h = decoder.decodeHeaders(streamId, buf);
      headers.computeIfAbsent(streamId, k -> new CopyOnWriteArrayList<>()).add(h);
    } catch (Http2Exception e) {
      throw new IllegalStateException(e);
    } finally {
      buf.release();
    }
  }
}
