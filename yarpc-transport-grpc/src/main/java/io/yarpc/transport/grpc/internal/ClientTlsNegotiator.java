package io.yarpc.transport.grpc.internal;

import io.grpc.netty.GrpcHttp2ConnectionHandler;
import io.grpc.netty.InternalProtocolNegotiator;
import io.grpc.netty.InternalProtocolNegotiators;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.util.AsciiString;
import io.yarpc.netty.internal.ReloadingSslContext;
import io.yarpc.netty.internal.TlsErrors;
import java.util.function.Consumer;

/**
 * The TLS negotiation of one peer's channel: grpc-java's own client TLS negotiation (ALPN {@code h2}, the
 * server name as SNI and checked against the certificate unless the config turned that off) with an
 * engine from the {@linkplain ReloadingSslContext newest context}, plus an observer that tells the peer
 * why a connection's TLS failed — the handshake, or the server's refusal that a TLS 1.3 client only hears
 * after its own handshake ended (a missing or untrusted client certificate) — since grpc-java's channel
 * does not say. Given to the channel builder as its protocol negotiator factory; thread-safe.
 */
public final class ClientTlsNegotiator implements InternalProtocolNegotiator.ClientFactory {
  private final ReloadingSslContext context;
  private final String serverName;
  private final Consumer<String> failures;

  /**
   * A negotiator factory using {@code context}, sending and verifying {@code serverName} (null: the
   * host the channel connects to), reporting each connection's TLS failure, described, to {@code
   * failures} (on the connection's event loop).
   */
  public ClientTlsNegotiator(
      ReloadingSslContext context, String serverName, Consumer<String> failures) {
    this.context = context;
    this.serverName = serverName;
    this.failures = failures;
  }

  @Override
  public InternalProtocolNegotiator.ProtocolNegotiator newNegotiator() {
    InternalProtocolNegotiator.ProtocolNegotiator tls =
        InternalProtocolNegotiators.tls(context, serverName, null);
    return new InternalProtocolNegotiator.ProtocolNegotiator() {
      @Override
      public AsciiString scheme() {
        return tls.scheme();
      }

      @Override
      public ChannelHandler newHandler(GrpcHttp2ConnectionHandler grpcHandler) {
        return new Install(tls.newHandler(grpcHandler));
      }

      @Override
      public void close() {
        tls.close();
      }
    };
  }

  @Override
  public int getDefaultPort() {
    return 443;
  }

  /**
   * Puts grpc-java's negotiation in the pipeline ahead of itself; once the connection is up (grpc-java
   * has added its TLS handler), puts an {@link Observer} right behind the TLS handler and leaves.
   */
  private final class Install extends ChannelInboundHandlerAdapter {
    private final ChannelHandler negotiation;

    Install(ChannelHandler negotiation) {
      this.negotiation = negotiation;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
      ctx.pipeline().addBefore(ctx.name(), null, negotiation);
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
      ctx.fireChannelActive();
      if (ctx.isRemoved()) {
        return;
      }
      ChannelHandlerContext ssl = ctx.pipeline().context(SslHandler.class);
      if (ssl != null && !ssl.isRemoved()) {
        ctx.pipeline().addAfter(ssl.name(), null, new Observer());
      }
      ctx.pipeline().remove(this);
    }
  }

  /**
   * Sees what the TLS handler reports first: a failed handshake, or a TLS failure after it; leaves once the
   * server has sent data (it accepted the client).
   */
  private final class Observer extends ChannelInboundHandlerAdapter {
    private boolean handshaken;
    private boolean reported;

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
      if (evt instanceof SslHandshakeCompletionEvent) {
        SslHandshakeCompletionEvent done = (SslHandshakeCompletionEvent) evt;
        if (done.isSuccess()) {
          handshaken = true;
        } else {
          report(done.cause());
        }
      }
      ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      if (TlsErrors.isTls(cause)) {
        report(cause);
      }
      ctx.fireExceptionCaught(cause);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (handshaken) {
        ctx.pipeline().remove(this);
      }
      ctx.fireChannelRead(msg);
    }

    private void report(Throwable cause) {
      if (!reported) {
        reported = true;
        failures.accept("TLS handshake failed: " + TlsErrors.describe(cause));
      }
    }
  }
}
