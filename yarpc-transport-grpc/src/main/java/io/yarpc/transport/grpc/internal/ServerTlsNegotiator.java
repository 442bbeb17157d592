package io.yarpc.transport.grpc.internal;

import io.grpc.netty.GrpcHttp2ConnectionHandler;
import io.grpc.netty.InternalProtocolNegotiationEvent;
import io.grpc.netty.InternalProtocolNegotiator;
import io.grpc.netty.InternalProtocolNegotiators;
import io.grpc.netty.ProtocolNegotiationEvent;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.AsciiString;
import io.yarpc.netty.internal.RateLimitedLog;
import io.yarpc.netty.internal.ReloadingSslContext;
import io.yarpc.netty.internal.ServerTls;
import io.yarpc.netty.internal.TlsErrors;
import io.yarpc.tls.TlsMode;

/**
 * The inbound's TLS negotiation, given to grpc-java's server as its protocol negotiator: each connection's
 * first byte tells a TLS handshake (a record of type 22) from plaintext. A TLS connection goes to
 * grpc-java's own server TLS negotiation (the handshake with the {@linkplain ReloadingSslContext newest
 * certificate}, ALPN {@code h2} required, the session in the call attributes); plaintext goes to grpc-java's
 * plaintext negotiation on a {@link TlsMode#PERMISSIVE} port, and is closed without an answer on an {@link
 * TlsMode#ENFORCED} one, which gRPC clients report as {@code UNAVAILABLE} (grpc-java: {@code Network closed
 * for unknown reason}); the refusal is logged.
 *
 * <p>Why no HTTP/2 answer: an HTTP/2 client must get {@code SETTINGS} before a {@code GOAWAY} (else it
 * reports a protocol error, {@code INTERNAL} in grpc-java), and with {@code SETTINGS} it takes the connection
 * for ready. A {@code GOAWAY(INADEQUATE_SECURITY)} naming no stream then makes grpc-java retry the call
 * transparently on a new connection, up to a thousand times, before it fails with {@code INTERNAL}; one
 * naming every stream races with the client's first stream and ends as {@code PERMISSION_DENIED} at best.
 *
 * <p>Nothing else changes: the server's handshake timeout runs from the connection's acceptance to the
 * client's first HTTP/2 {@code SETTINGS}, so it covers the wait for the first byte and the TLS handshake.
 * Refused plaintext and failed handshakes are logged at most once a second (the others are counted into
 * the next line). One instance serves all of an inbound's connections; thread-safe.
 */
public final class ServerTlsNegotiator implements InternalProtocolNegotiator.ProtocolNegotiator {
  private static final org.slf4j.Logger log =
      org.slf4j.LoggerFactory.getLogger(ServerTlsNegotiator.class);

  private final TlsMode mode;
  private final String who;
  private final InternalProtocolNegotiator.ProtocolNegotiator tls;
  private final InternalProtocolNegotiator.ProtocolNegotiator plaintext;
  private final RateLimitedLog failures = new RateLimitedLog(log);

  /**
   * A negotiator serving TLS with {@code context} and treating plaintext as {@code mode} says ({@link
   * TlsMode#PERMISSIVE} or {@link TlsMode#ENFORCED}); {@code who} names the inbound in the log.
   */
  public ServerTlsNegotiator(ReloadingSslContext context, TlsMode mode, String who) {
    if (mode != TlsMode.PERMISSIVE && mode != TlsMode.ENFORCED) {
      throw new IllegalArgumentException("a TLS negotiator is PERMISSIVE or ENFORCED, not " + mode);
    }
    this.mode = mode;
    this.who = who;
    this.tls = InternalProtocolNegotiators.serverTls(context);
    this.plaintext = InternalProtocolNegotiators.serverPlaintext();
  }

  @Override
  public AsciiString scheme() {
    return tls.scheme();
  }

  @Override
  public ChannelHandler newHandler(GrpcHttp2ConnectionHandler grpcHandler) {
    return new Sniffer(grpcHandler);
  }

  @Override
  public void close() {
    tls.close();
    plaintext.close();
  }

  /**
   * The first handler of a connection's negotiation: holds grpc-java's negotiation event until the first
   * bytes arrive, then puts grpc-java's TLS or plaintext negotiation in its place and hands both on.
   */
  private final class Sniffer extends ChannelInboundHandlerAdapter {
    private final GrpcHttp2ConnectionHandler grpcHandler;
    private ProtocolNegotiationEvent event;
    private boolean refused;

    Sniffer(GrpcHttp2ConnectionHandler grpcHandler) {
      this.grpcHandler = grpcHandler;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
      if (evt instanceof ProtocolNegotiationEvent) {
        event = (ProtocolNegotiationEvent) evt; // for the negotiation that takes over
        return;
      }
      ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (!(msg instanceof ByteBuf)) {
        ctx.fireChannelRead(msg);
        return;
      }
      ByteBuf in = (ByteBuf) msg;
      if (refused || !in.isReadable()) {
        in.release();
        return;
      }
      boolean tlsRecord = ServerTls.startsTlsHandshake(in);
      if (!tlsRecord && mode == TlsMode.ENFORCED) {
        refused = true;
        in.release();
        failures.info(
            "{}: refused a plaintext connection from {}: {}",
            who,
            ctx.channel().remoteAddress(),
            "TLS is required");
        ctx.close();
        return;
      }
      ChannelHandler next = (tlsRecord ? tls : plaintext).newHandler(grpcHandler);
      ctx.pipeline().addAfter(ctx.name(), null, next);
      // grpc-java's negotiation starts on this event (it adds the TLS handler, or hands over at
      // once)
      ctx.fireUserEventTriggered(
          event != null ? event : InternalProtocolNegotiationEvent.getDefault());
      if (tlsRecord) {
        SslHandler ssl = ctx.pipeline().get(SslHandler.class);
        if (ssl != null) {
          ssl.handshakeFuture()
              .addListener(
                  f -> {
                    if (!f.isSuccess()) {
                      failures.info(
                          "{}: TLS handshake with {} failed: {}",
                          who,
                          ctx.channel().remoteAddress(),
                          TlsErrors.describe(f.cause()));
                    }
                  });
        }
      }
      ctx.pipeline().remove(this);
      ctx.fireChannelRead(in); // a removed handler's context still hands on to what followed it
    }
  }
}
