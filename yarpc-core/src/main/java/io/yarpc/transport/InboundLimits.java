package io.yarpc.transport;

import io.yarpc.internal.Checks;
import java.time.Duration;

/**
 * The limits an inbound enforces against peers that send too much, too slowly, or too often: one
 * concept under one name for every transport (each inbound's builder takes an {@code InboundLimits}
 * through {@code limits(...)}; an option a protocol has no use for is ignored by that transport, as
 * its Javadoc says). The defaults are safe for a server on an open network and cost nothing on the
 * normal path; every value is validated when set.
 *
 * <p>What a peer gets when it goes past a limit is the protocol's own answer (the README's "Limits and
 * hardening" table lists each): an HTTP status with {@code Rpc-Error-Code}, an HTTP/2 {@code
 * RST_STREAM} or {@code GOAWAY}, a gRPC status, a TChannel error frame. Where the protocol allows it
 * the connection stays open; limits on bytes held apply backpressure (reading stops, or flow-control
 * credit is withheld) rather than failing calls.
 *
 * <p>Immutable and thread-safe; build one with {@link #builder()} or start from {@link #defaults()}.
 */
public final class InboundLimits {
  private static final InboundLimits DEFAULTS = new Builder().build();

  /** The default of {@link Builder#maxConcurrentCallsPerConnection} on HTTP/2 and gRPC. */
  public static final int DEFAULT_CONCURRENT_CALLS_PER_CONNECTION = 250;

  /** The default of {@link Builder#maxConcurrentCallsPerConnection} on TChannel. */
  public static final int DEFAULT_TCHANNEL_CONCURRENT_CALLS_PER_CONNECTION = 512;

  private final int maxConnections;
  private final int maxConcurrentCallsPerConnection; // 0: not set, each transport's default
  private final int maxRequestSize;
  private final long maxPendingBytesPerConnection;
  private final long maxPendingBytes;
  private final int maxHeaderCount;
  private final int maxHeaderBytes;
  private final int maxRequestLineLength;
  private final int maxRstFramesPerWindow;
  private final Duration rstFramesWindow;
  private final Duration readTimeout;
  private final Duration writeTimeout;
  private final Duration idleTimeout;
  private final Duration maxConnectionAge;
  private final Duration maxConnectionAgeGrace;
  private final Duration handshakeTimeout;
  private final Duration permitKeepAliveTime;
  private final boolean permitKeepAliveWithoutCalls;

  private InboundLimits(Builder b) {
    this.maxConnections = b.maxConnections;
    this.maxConcurrentCallsPerConnection = b.maxConcurrentCallsPerConnection;
    this.maxRequestSize = b.maxRequestSize;
    this.maxPendingBytesPerConnection = b.maxPendingBytesPerConnection;
    this.maxPendingBytes = b.maxPendingBytes;
    this.maxHeaderCount = b.maxHeaderCount;
    this.maxHeaderBytes = b.maxHeaderBytes;
    this.maxRequestLineLength = b.maxRequestLineLength;
    this.maxRstFramesPerWindow = b.maxRstFramesPerWindow;
    this.rstFramesWindow = b.rstFramesWindow;
    this.readTimeout = b.readTimeout;
    this.writeTimeout = b.writeTimeout;
    this.idleTimeout = b.idleTimeout;
    this.maxConnectionAge = b.maxConnectionAge;
    this.maxConnectionAgeGrace = b.maxConnectionAgeGrace;
    this.handshakeTimeout = b.handshakeTimeout;
    this.permitKeepAliveTime = b.permitKeepAliveTime;
    this.permitKeepAliveWithoutCalls = b.permitKeepAliveWithoutCalls;
  }

  /** The defaults listed on each {@link Builder} method. */
  public static InboundLimits defaults() {
    return DEFAULTS;
  }

  /** A builder holding the defaults. */
  public static Builder builder() {
    return new Builder();
  }

  /** A builder holding these limits. */
  public Builder toBuilder() {
    return new Builder(this);
  }

  /** See {@link Builder#maxConnections}. */
  public int maxConnections() {
    return maxConnections;
  }

  /**
   * See {@link Builder#maxConcurrentCallsPerConnection}: the value set, or {@value
   * #DEFAULT_CONCURRENT_CALLS_PER_CONNECTION} (the HTTP/2 and gRPC default).
   */
  public int maxConcurrentCallsPerConnection() {
    return maxConcurrentCallsPerConnectionOr(DEFAULT_CONCURRENT_CALLS_PER_CONNECTION);
  }

  /**
   * The value set with {@link Builder#maxConcurrentCallsPerConnection}, or {@code transportDefault} when
   * none was: for transports whose default differs (TChannel's, see the builder).
   */
  public int maxConcurrentCallsPerConnectionOr(int transportDefault) {
    return maxConcurrentCallsPerConnection != 0
        ? maxConcurrentCallsPerConnection
        : transportDefault;
  }

  /** See {@link Builder#maxRequestSize}. */
  public int maxRequestSize() {
    return maxRequestSize;
  }

  /** See {@link Builder#maxPendingBytesPerConnection}. */
  public long maxPendingBytesPerConnection() {
    return maxPendingBytesPerConnection;
  }

  /** See {@link Builder#maxPendingBytes}. */
  public long maxPendingBytes() {
    return maxPendingBytes;
  }

  /** See {@link Builder#maxHeaderCount}. */
  public int maxHeaderCount() {
    return maxHeaderCount;
  }

  /** See {@link Builder#maxHeaderBytes}. */
  public int maxHeaderBytes() {
    return maxHeaderBytes;
  }

  /** See {@link Builder#maxRequestLineLength}. */
  public int maxRequestLineLength() {
    return maxRequestLineLength;
  }

  /** See {@link Builder#maxRstFramesPerWindow}. */
  public int maxRstFramesPerWindow() {
    return maxRstFramesPerWindow;
  }

  /** See {@link Builder#maxRstFramesPerWindow}. */
  public Duration rstFramesWindow() {
    return rstFramesWindow;
  }

  /** See {@link Builder#readTimeout}. */
  public Duration readTimeout() {
    return readTimeout;
  }

  /** See {@link Builder#writeTimeout}. */
  public Duration writeTimeout() {
    return writeTimeout;
  }

  /** See {@link Builder#idleTimeout}. */
  public Duration idleTimeout() {
    return idleTimeout;
  }

  /** See {@link Builder#maxConnectionAge}; null for none. */
  public Duration maxConnectionAge() {
    return maxConnectionAge;
  }

  /** See {@link Builder#maxConnectionAge}; null for no limit on the grace period. */
  public Duration maxConnectionAgeGrace() {
    return maxConnectionAgeGrace;
  }

  /** See {@link Builder#handshakeTimeout}. */
  public Duration handshakeTimeout() {
    return handshakeTimeout;
  }

  /** See {@link Builder#permitKeepAliveTime}. */
  public Duration permitKeepAliveTime() {
    return permitKeepAliveTime;
  }

  /** See {@link Builder#permitKeepAliveWithoutCalls}. */
  public boolean permitKeepAliveWithoutCalls() {
    return permitKeepAliveWithoutCalls;
  }

  /** Equal when every limit is (an unset per-connection call limit equals only an unset one). */
  @Override
  public boolean equals(Object other) {
    if (!(other instanceof InboundLimits)) {
      return false;
    }
    InboundLimits o = (InboundLimits) other;
    return maxConnections == o.maxConnections
        && maxConcurrentCallsPerConnection == o.maxConcurrentCallsPerConnection
        && maxRequestSize == o.maxRequestSize
        && maxPendingBytesPerConnection == o.maxPendingBytesPerConnection
        && maxPendingBytes == o.maxPendingBytes
        && maxHeaderCount == o.maxHeaderCount
        && maxHeaderBytes == o.maxHeaderBytes
        && maxRequestLineLength == o.maxRequestLineLength
        && maxRstFramesPerWindow == o.maxRstFramesPerWindow
        && java.util.Objects.equals(rstFramesWindow, o.rstFramesWindow)
        && java.util.Objects.equals(readTimeout, o.readTimeout)
        && java.util.Objects.equals(writeTimeout, o.writeTimeout)
        && java.util.Objects.equals(idleTimeout, o.idleTimeout)
        && java.util.Objects.equals(maxConnectionAge, o.maxConnectionAge)
        && java.util.Objects.equals(maxConnectionAgeGrace, o.maxConnectionAgeGrace)
        && java.util.Objects.equals(handshakeTimeout, o.handshakeTimeout)
        && java.util.Objects.equals(permitKeepAliveTime, o.permitKeepAliveTime)
        && permitKeepAliveWithoutCalls == o.permitKeepAliveWithoutCalls;
  }

  @Override
  public int hashCode() {
    return java.util.Objects.hash(
        maxConnections,
        maxConcurrentCallsPerConnection,
        maxRequestSize,
        maxPendingBytesPerConnection,
        maxPendingBytes,
        maxHeaderCount,
        maxHeaderBytes,
        maxRequestLineLength,
        maxRstFramesPerWindow,
        rstFramesWindow,
        readTimeout,
        writeTimeout,
        idleTimeout,
        maxConnectionAge,
        maxConnectionAgeGrace,
        handshakeTimeout,
        permitKeepAliveTime,
        permitKeepAliveWithoutCalls);
  }

  @Override
  public String toString() {
    return "InboundLimits{maxConnections="
        + maxConnections
        + ", maxConcurrentCallsPerConnection="
        + (maxConcurrentCallsPerConnection == 0 ? "default" : maxConcurrentCallsPerConnection)
        + ", maxRequestSize="
        + maxRequestSize
        + ", maxPendingBytesPerConnection="
        + maxPendingBytesPerConnection
        + ", maxPendingBytes="
        + maxPendingBytes
        + ", maxHeaderCount="
        + maxHeaderCount
        + ", maxHeaderBytes="
        + maxHeaderBytes
        + ", maxRequestLineLength="
        + maxRequestLineLength
        + ", maxRstFramesPerWindow="
        + maxRstFramesPerWindow
        + "/"
        + rstFramesWindow
        + ", readTimeout="
        + readTimeout
        + ", writeTimeout="
        + writeTimeout
        + ", idleTimeout="
        + idleTimeout
        + ", maxConnectionAge="
        + maxConnectionAge
        + ", maxConnectionAgeGrace="
        + maxConnectionAgeGrace
        + ", handshakeTimeout="
        + handshakeTimeout
        + ", permitKeepAliveTime="
        + permitKeepAliveTime
        + ", permitKeepAliveWithoutCalls="
        + permitKeepAliveWithoutCalls
        + "}";
  }

  /** Builds {@link InboundLimits}; starts from the defaults. Not thread-safe. */
  public static final class Builder {
    private int maxConnections = 10_000;
    private int maxConcurrentCallsPerConnection; // 0: each transport's default
    private int maxRequestSize = 64 << 20;
    private long maxPendingBytesPerConnection = 64L << 20;
    private long maxPendingBytes = 256L << 20;
    private int maxHeaderCount = 256;
    private int maxHeaderBytes = 64 << 10;
    private int maxRequestLineLength = 8 << 10;
    private int maxRstFramesPerWindow = 200;
    private Duration rstFramesWindow = Duration.ofSeconds(30);
    private Duration readTimeout = Duration.ofSeconds(60);
    private Duration writeTimeout = Duration.ofSeconds(60);
    private Duration idleTimeout = Duration.ofMinutes(5);
    private Duration maxConnectionAge;
    private Duration maxConnectionAgeGrace;
    private Duration handshakeTimeout = Duration.ofSeconds(20);
    private Duration permitKeepAliveTime = Duration.ofMinutes(5);
    private boolean permitKeepAliveWithoutCalls;

    private Builder() {}

    private Builder(InboundLimits l) {
      this.maxConnections = l.maxConnections;
      this.maxConcurrentCallsPerConnection = l.maxConcurrentCallsPerConnection;
      this.maxRequestSize = l.maxRequestSize;
      this.maxPendingBytesPerConnection = l.maxPendingBytesPerConnection;
      this.maxPendingBytes = l.maxPendingBytes;
      this.maxHeaderCount = l.maxHeaderCount;
      this.maxHeaderBytes = l.maxHeaderBytes;
      this.maxRequestLineLength = l.maxRequestLineLength;
      this.maxRstFramesPerWindow = l.maxRstFramesPerWindow;
      this.rstFramesWindow = l.rstFramesWindow;
      this.readTimeout = l.readTimeout;
      this.writeTimeout = l.writeTimeout;
      this.idleTimeout = l.idleTimeout;
      this.maxConnectionAge = l.maxConnectionAge;
      this.maxConnectionAgeGrace = l.maxConnectionAgeGrace;
      this.handshakeTimeout = l.handshakeTimeout;
      this.permitKeepAliveTime = l.permitKeepAliveTime;
      this.permitKeepAliveWithoutCalls = l.permitKeepAliveWithoutCalls;
    }

    /**
     * Connections the inbound keeps open at once; default 10,000. A connection accepted beyond it is
     * closed at once, before anything is read from it, and counted.
     */
    public Builder maxConnections(int max) {
      this.maxConnections = positive(max, "maxConnections");
      return this;
    }

    /**
     * Calls one connection may have in flight (being received or handled) at once, below the dispatcher's
     * handler pool (1,024 threads by default), so one connection cannot take all of it. HTTP/2 and gRPC
     * announce it as {@code SETTINGS_MAX_CONCURRENT_STREAMS} (clients queue calls beyond it) and refuse
     * streams beyond it with {@code RST_STREAM(REFUSED_STREAM)}; default {@value
     * #DEFAULT_CONCURRENT_CALLS_PER_CONNECTION} (Go's HTTP/2 server default). TChannel answers a call
     * beyond it with a {@code busy} error frame ({@code resource-exhausted}); default {@value
     * #DEFAULT_TCHANNEL_CONCURRENT_CALLS_PER_CONNECTION}, higher because TChannel clients send every call
     * to a server over one connection and learn no limit. HTTP/1.1 handles one call at a time per
     * connection anyway. Keep it at 100 or more: HTTP/2 clients may open up to 100 streams before they see
     * the setting.
     */
    public Builder maxConcurrentCallsPerConnection(int max) {
      this.maxConcurrentCallsPerConnection = positive(max, "maxConcurrentCallsPerConnection");
      return this;
    }

    /**
     * The largest request body (gRPC: message; TChannel: arg bytes of one call) accepted, in bytes;
     * default 64 MiB. Larger: HTTP 413 and gRPC {@code RESOURCE_EXHAUSTED}; TChannel a bad-request error
     * frame (not busy, which TChannel clients retry on another peer).
     */
    public Builder maxRequestSize(int bytes) {
      this.maxRequestSize = positive(bytes, "maxRequestSize");
      return this;
    }

    /**
     * Bytes one connection may hold for requests received but not yet handed to a handler; default 64
     * MiB. Past it the connection stops reading (HTTP/1.1) or withholds HTTP/2 flow-control credit (h2c)
     * until those bytes are handed on or released: backpressure, not failure. A connection's oldest request
     * may always complete past the budget, so a budget below {@link #maxRequestSize} only slows large
     * requests down, it never deadlocks them; on a multiplexed connection (h2c) the budget does not take
     * back flow-control windows already granted. TChannel, whose calls share one socket without flow
     * control, keeps reading so that the oldest message can complete, and answers a frame of another
     * message arriving while the others hold the budget with busy for that message.
     */
    public Builder maxPendingBytesPerConnection(long bytes) {
      this.maxPendingBytesPerConnection = positive(bytes, "maxPendingBytesPerConnection");
      return this;
    }

    /**
     * Bytes all connections of the inbound together may hold for requests not yet handed to a handler;
     * default 256 MiB. Past it, every connection that holds such bytes stops reading (or withholds
     * credit) until the total drops again, except one connection at a time that may finish its oldest
     * request (so the inbound cannot wedge with every connection holding part of one): the total may
     * overshoot by about one request and one socket read per connection.
     */
    public Builder maxPendingBytes(long bytes) {
      this.maxPendingBytes = positive(bytes, "maxPendingBytes");
      return this;
    }

    /**
     * Header fields one request may carry (HTTP headers, gRPC metadata entries, TChannel application and
     * transport headers); default 256. More: HTTP/1.1 431, HTTP/2 and gRPC a 431 or {@code RST_STREAM},
     * TChannel a {@code bad-request} error frame; counted before the headers are decoded further (on
     * HTTP/2 after HPACK decoding of a block, which {@link #maxHeaderBytes} bounds while it decodes).
     */
    public Builder maxHeaderCount(int max) {
      this.maxHeaderCount = positive(max, "maxHeaderCount");
      return this;
    }

    /**
     * The bytes of one request's header block (HTTP/1.1 header lines; HTTP/2 and gRPC header list size as
     * {@code SETTINGS_MAX_HEADER_LIST_SIZE} counts it; TChannel arg2), separate from the body limit;
     * default 64 KiB. Larger: as {@link #maxHeaderCount}. At least 1 KiB.
     */
    public Builder maxHeaderBytes(int bytes) {
      if (bytes < 1024) {
        throw new IllegalArgumentException("maxHeaderBytes must be at least 1024: " + bytes);
      }
      this.maxHeaderBytes = bytes;
      return this;
    }

    /**
     * The longest HTTP/1.1 request line, in bytes; default 8 KiB. Longer: 414. Other transports have no
     * request line.
     */
    public Builder maxRequestLineLength(int bytes) {
      if (bytes < 256) {
        throw new IllegalArgumentException("maxRequestLineLength must be at least 256: " + bytes);
      }
      this.maxRequestLineLength = bytes;
      return this;
    }

    /**
     * HTTP/2 stream resets one connection may cause within {@code window}, whether the client sends
     * {@code RST_STREAM} (rapid reset, CVE-2023-44487) or provokes the server into sending one
     * (CVE-2025-55163); default 200 per 30 s (Netty's). Beyond it the connection gets {@code
     * GOAWAY(ENHANCE_YOUR_CALM)} and is closed. Applies to h2c and gRPC. On h2c, resets received and
     * resets sent are counted separately (Netty's two counters, each up to {@code max}; resets sent with
     * {@code CANCEL} or {@code NO_ERROR} are not counted) and the window is rounded up to whole seconds.
     */
    public Builder maxRstFramesPerWindow(int max, Duration window) {
      this.maxRstFramesPerWindow = positive(max, "maxRstFramesPerWindow");
      this.rstFramesWindow = positive(window, "window");
      return this;
    }

    /**
     * How long receiving one request may take once it has begun, so a peer that stalls half-way cannot
     * hold memory; default 60 s. Past it: HTTP 408 (and the connection closes), a gRPC call or a TChannel
     * call still arriving ends with {@code deadline-exceeded} and what was received is released. A call
     * whose own deadline comes sooner ends at that deadline instead.
     */
    public Builder readTimeout(Duration timeout) {
      this.readTimeout = positive(timeout, "readTimeout");
      return this;
    }

    /**
     * How long a response may go without any of it being written because the peer does not read (a
     * zero flow-control window, a full socket); default 60 s. Past it the HTTP/2 stream is reset, the
     * HTTP/1.1 or TChannel connection is closed, and what was waiting to be written is released.
     */
    public Builder writeTimeout(Duration timeout) {
      this.writeTimeout = positive(timeout, "writeTimeout");
      return this;
    }

    /**
     * How long a connection may stay open with no call in flight; default 5 min. Then it is closed
     * (HTTP/2 and gRPC with a {@code GOAWAY} first).
     */
    public Builder idleTimeout(Duration timeout) {
      this.idleTimeout = positive(timeout, "idleTimeout");
      return this;
    }

    /**
     * The longest a connection may live, so clients spread out again over new replicas; default none.
     * Then it is asked to go away (HTTP/2 and gRPC {@code GOAWAY}; HTTP/1.1 {@code Connection: close} on
     * the next response) and closed after {@code grace} (null: when its calls finish).
     */
    public Builder maxConnectionAge(Duration age, Duration grace) {
      this.maxConnectionAge = positive(age, "age");
      this.maxConnectionAgeGrace = grace == null ? null : positive(grace, "grace");
      return this;
    }

    /**
     * How long a new connection may take to complete its handshake (TChannel init, TLS, the HTTP/2
     * preface and settings); default 20 s. Then it is closed.
     */
    public Builder handshakeTimeout(Duration timeout) {
      this.handshakeTimeout = positive(timeout, "handshakeTimeout");
      return this;
    }

    /**
     * The most frequent keepalive pings a gRPC client may send; default 5 min (grpc-java's and
     * grpc-go's). A client that pings more often gets {@code GOAWAY(ENHANCE_YOUR_CALM, "too_many_pings")}
     * (grpc-java tolerates two early pings, and forgets them when the server sends headers or data): set
     * it no longer than the {@link KeepAlive#time() keepalive time} of the clients. HTTP/2 (h2c) and TChannel
     * pings are answered as long as the peer reads the answers (see {@link #writeTimeout}).
     */
    public Builder permitKeepAliveTime(Duration time) {
      this.permitKeepAliveTime = positive(time, "permitKeepAliveTime");
      return this;
    }

    /**
     * Whether a gRPC client may send keepalive pings while it has no call in flight; default false
     * (grpc-java's and grpc-go's): such a client gets {@code GOAWAY(ENHANCE_YOUR_CALM,
     * "too_many_pings")} unless its pings are two hours apart. Allow it for clients whose {@link
     * KeepAlive#withoutCalls()} is on. Other transports answer pings either way.
     */
    public Builder permitKeepAliveWithoutCalls(boolean permit) {
      this.permitKeepAliveWithoutCalls = permit;
      return this;
    }

    /** The limits. */
    public InboundLimits build() {
      return new InboundLimits(this);
    }

    private static int positive(int value, String name) {
      if (value < 1) {
        throw new IllegalArgumentException(name + " must be positive: " + value);
      }
      return value;
    }

    private static long positive(long value, String name) {
      if (value < 1) {
        throw new IllegalArgumentException(name + " must be positive: " + value);
      }
      return value;
    }

    private static Duration positive(Duration value, String name) {
      return Checks.positive(value, name);
    }
  }
}
