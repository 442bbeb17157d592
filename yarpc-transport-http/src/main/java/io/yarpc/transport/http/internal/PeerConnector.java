package io.yarpc.transport.http.internal;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.SslHandler;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.Checks;
import io.yarpc.netty.internal.ClientTls;
import io.yarpc.netty.internal.HandshakeGate;
import io.yarpc.netty.internal.HeapReads;
import io.yarpc.netty.internal.ReloadingSslContext;
import io.yarpc.netty.internal.TlsErrors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Opens the connections of one {@link HttpPeer}: TCP to its {@code host:port} with the transport's
 * options, then, for an {@code https} peer, the TLS handshake (SNI and hostname verification for the host,
 * or the config's server name) and the ALPN check, before the HTTP handlers join the pipeline. Holds no
 * state of its own beyond the peer's address; thread-safe.
 */
final class PeerConnector {
  private final String identifier;
  private final String host;
  private final int port;
  private final boolean tls;
  private final Supplier<ClientContext> contexts;

  PeerConnector(
      String identifier, String host, int port, boolean tls, Supplier<ClientContext> contexts) {
    this.identifier = identifier;
    this.host = host;
    this.port = port;
    this.tls = tls;
    this.contexts = contexts;
  }

  private ClientContext context() {
    ClientContext c = contexts.get();
    if (c == null) {
      throw Checks.notRunning("HTTP transport");
    }
    return c;
  }

  /**
   * Opens a connection to the peer whose pipeline gets {@code handlers} (added at its end) once it can
   * carry HTTP: at once over plaintext; over TLS after the handshake, which also checks that the server
   * agreed to HTTP/2 through ALPN when {@code h2}. {@code ready} is called exactly once, on the
   * connection's event loop: with the channel, or with why it could not be opened (a handshake failure
   * as {@link TlsErrors#handshakeFailure}); a channel that failed is closed.
   *
   * @return the connect future (its channel is the connection, also while the handshake runs)
   * @throws YarpcException when there is no TLS context for the peer
   * @throws RuntimeException when the transport is not running
   */
  ChannelFuture connect(
      boolean h2, Consumer<ChannelPipeline> handlers, BiConsumer<Channel, Throwable> ready) {
    AtomicBoolean once = new AtomicBoolean();
    BiConsumer<Channel, Throwable> readyOnce =
        (ch, error) -> {
          if (once.compareAndSet(false, true)) {
            ready.accept(ch, error);
          }
        };
    ClientContext c = context();
    ReloadingSslContext ssl = tls ? sslContext(c, h2) : null; // built before any socket opens
    ChannelFuture f =
        bootstrap()
            .handler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    ChannelPipeline p = ch.pipeline();
                    // h2c copies each DATA frame into heap pieces itself (ReceivedContent)
                    HeapReads.install(p, c.receiveIntoHeap() && (ssl != null || !h2));
                    if (ssl == null) {
                      handlers.accept(p);
                      return;
                    }
                    SslHandler handler =
                        ClientTls.handler(ssl, ch.alloc(), host, port, c.connectTimeoutMillis());
                    p.addLast("tls", handler);
                    p.addLast(
                        "tls-handshake",
                        new HandshakeGate(handler, afterHandshake(h2, handlers, readyOnce)));
                  }
                })
            .connect(host, port);
    f.addListener(
        (ChannelFutureListener)
            done -> {
              if (!done.isSuccess()) {
                readyOnce.accept(null, done.cause());
              } else if (ssl == null) {
                readyOnce.accept(done.channel(), null);
              }
            });
    return f;
  }

  private ReloadingSslContext sslContext(ClientContext c, boolean h2) {
    try {
      return c.tls().context(h2);
    } catch (IllegalStateException e) {
      throw YarpcException.withCause(
          Code.UNAVAILABLE,
          "cannot open a TLS connection to peer " + identifier + ": " + e.getMessage(),
          e);
    }
  }

  /**
   * What follows a new connection's TLS handshake: the HTTP handlers, once ALPN agreed to what the
   * connection needs; a failure (of the handshake, or ALPN without {@code h2} for an h2 connection) fails
   * the connection with a readable reason.
   */
  private HandshakeGate.Listener afterHandshake(
      boolean h2, Consumer<ChannelPipeline> handlers, BiConsumer<Channel, Throwable> ready) {
    return new HandshakeGate.Listener() {
      @Override
      public void succeeded(ChannelHandlerContext ctx, SslHandler ssl) {
        String alpn = ssl.applicationProtocol();
        if (h2 && !ApplicationProtocolNames.HTTP_2.equals(alpn)) {
          throw YarpcException.of(
              Code.UNAVAILABLE,
              "peer %s did not agree to HTTP/2 over TLS (ALPN %s); is HTTP/2 off on its inbound?",
              identifier,
              alpn == null || alpn.isEmpty() ? "not used" : "chose " + alpn);
        }
        handlers.accept(ctx.pipeline());
        ready.accept(ctx.channel(), null);
      }

      @Override
      public void failed(ChannelHandlerContext ctx, Throwable cause) {
        ready.accept(
            null,
            cause instanceof YarpcException
                ? cause
                : TlsErrors.handshakeFailure(identifier, cause));
      }
    };
  }

  private Bootstrap bootstrap() {
    return new Bootstrap()
        .group(context().group())
        .channel(context().channelClass())
        .option(ChannelOption.ALLOCATOR, context().receiveAllocator())
        .option(ChannelOption.TCP_NODELAY, true)
        .option(ChannelOption.SO_KEEPALIVE, true)
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, context().connectTimeoutMillis());
  }
}
