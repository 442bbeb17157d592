package io.yarpc.netty.internal;

import static java.util.Objects.requireNonNull;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.ssl.SslHandler;
import io.yarpc.tls.TlsConfig;
import io.yarpc.tls.TlsMode;
import java.time.Duration;
import java.util.List;

/**
 * The TLS front of an inbound's connections. It reads a connection's first byte: a TLS record (a handshake,
 * type 22) gets a {@link SslHandler} from the newest context, and the transport's pipeline once the
 * handshake is over (ALPN settled, the client's certificate verified); plaintext gets the transport's
 * pipeline at once on a {@link TlsMode#PERMISSIVE} port, and the transport's refusal, then a close, on an
 * {@link TlsMode#ENFORCED} one.
 *
 * <p>Failed handshakes and refused plaintext are logged at most once a second per inbound (the others are
 * counted into the next line), never per byte. One instance serves all of an inbound's connections;
 * thread-safe.
 */
public final class ServerTls {
  private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(ServerTls.class);
  private static final int TLS_HANDSHAKE_RECORD = 22;

  /** What the transport adds once the front knows what the connection speaks. Called on its event loop. */
  public interface Continuation {
    /** Adds the plaintext pipeline's handlers (at the end of {@code p}). */
    void plaintext(ChannelPipeline p);

    /**
     * Adds the handlers that follow the TLS handler (at the end of {@code p}), once the handshake
     * succeeded; {@code ssl.applicationProtocol()} is the ALPN protocol or {@code null}.
     */
    void tls(ChannelPipeline p, SslHandler ssl);

    /**
     * Answers a plaintext client of an {@link TlsMode#ENFORCED} port in the protocol's own way (an HTTP
     * {@code 400}, an error frame); the front flushes and closes the connection after. {@code firstBytes}
     * is what the client sent so far; it is released by the front. Default: nothing, the connection is
     * closed.
     */
    default void refusePlaintext(ChannelHandlerContext ctx, ByteBuf firstBytes) {}
  }

  private final ReloadingSslContext context;
  private final TlsMode mode;
  private final String who;
  private final long handshakeTimeoutMillis;
  private final RateLimitedLog failures = new RateLimitedLog(log);

  private ServerTls(ReloadingSslContext context, TlsMode mode, String who, Duration timeout) {
    this.context = context;
    this.mode = mode;
    this.who = who;
    this.handshakeTimeoutMillis = Math.max(1, timeout.toMillis());
  }

  /**
   * The front for {@code who} ("the HTTP inbound"): plaintext only when {@code config} is null or {@code
   * mode} is {@link TlsMode#DISABLED}.
   *
   * @throws IllegalStateException when the certificate cannot be read
   * @throws IllegalArgumentException when the config has no certificate
   */
  public static ServerTls create(
      TlsConfig config, TlsMode mode, List<String> alpn, String who, Duration handshakeTimeout) {
    requireNonNull(mode, "mode");
    if (config == null || mode == TlsMode.DISABLED) {
      return new ServerTls(null, TlsMode.DISABLED, who, handshakeTimeout);
    }
    config.requireCertificate(who);
    return new ServerTls(ReloadingSslContext.server(config, alpn), mode, who, handshakeTimeout);
  }

  /**
   * Whether a connection whose first readable byte is in {@code in} opens with a TLS handshake record
   * (type 22): how a port that takes both tells TLS from plaintext. {@code in} must be readable.
   */
  public static boolean startsTlsHandshake(ByteBuf in) {
    return in.getUnsignedByte(in.readerIndex()) == TLS_HANDSHAKE_RECORD;
  }

  /** Whether connections may be TLS. */
  public boolean enabled() {
    return context != null;
  }

  /** The mode in force ({@link TlsMode#DISABLED} without a config). */
  public TlsMode mode() {
    return mode;
  }

  /** The context new connections get their engine from, or {@code null} when disabled. */
  public ReloadingSslContext context() {
    return context;
  }

  /**
   * Sets up a new connection: when disabled, {@code next.plaintext} runs at once; otherwise a sniffing
   * handler is added at the end of {@code p} and {@code next} runs when the first byte arrived.
   */
  public void install(ChannelPipeline p, Continuation next) {
    if (context == null) {
      next.plaintext(p);
    } else {
      p.addLast("tls-sniff", new Sniffer(next));
    }
  }

  private final class Sniffer extends ByteToMessageDecoder {
    private final Continuation next;
    private boolean refused;

    Sniffer(Continuation next) {
      this.next = next;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
      if (refused) {
        in.skipBytes(in.readableBytes());
        return;
      }
      if (!in.isReadable()) {
        return;
      }
      ChannelPipeline p = ctx.pipeline();
      if (startsTlsHandshake(in)) {
        SslHandler ssl = context.newHandler(ctx.alloc());
        ssl.setHandshakeTimeoutMillis(handshakeTimeoutMillis);
        p.addAfter(ctx.name(), "tls", ssl);
        p.addAfter("tls", "tls-handshake", new HandshakeGate(ssl, afterHandshake(next)));
        p.remove(this); // hands what it has read to the TLS handler
      } else if (mode == TlsMode.PERMISSIVE) {
        next.plaintext(p);
        p.remove(this); // hands what it has read to the plaintext pipeline
      } else {
        refused = true;
        failures.info(
            "{}: refused a plaintext connection from {}: TLS is required",
            who,
            ctx.channel().remoteAddress());
        ByteBuf first = in.readRetainedSlice(in.readableBytes());
        try {
          next.refusePlaintext(ctx, first);
        } finally {
          first.release();
        }
        ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
      }
    }
  }

  /** What the gate after a TLS handler does: build the pipeline, or log the failure. */
  private HandshakeGate.Listener afterHandshake(Continuation next) {
    return new HandshakeGate.Listener() {
      @Override
      public void succeeded(ChannelHandlerContext ctx, SslHandler ssl) {
        Connections.info(
            ctx.channel()); // made and cached now that the client's certificate is known
        next.tls(ctx.pipeline(), ssl);
      }

      @Override
      public void failed(ChannelHandlerContext ctx, Throwable cause) {
        failures.info(
            "{}: TLS handshake with {} failed: {}",
            who,
            ctx.channel().remoteAddress(),
            TlsErrors.describe(cause));
      }
    };
  }
}
