package io.yarpc.netty.internal;

import io.netty.channel.Channel;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.AttributeKey;
import io.yarpc.transport.ConnectionInfo;

/**
 * The {@link ConnectionInfo} of a server-side channel, made once per connection and shared by its calls.
 * For a child channel (an HTTP/2 stream), the connection's. Thread-safe.
 */
public final class Connections {
  private static final AttributeKey<ConnectionInfo> INFO =
      AttributeKey.valueOf(Connections.class, "info");

  private Connections() {}

  /** The connection {@code ch} (or its parent connection) is on. */
  public static ConnectionInfo info(Channel ch) {
    Channel c =
        ch.parent() != null && !(ch.parent() instanceof io.netty.channel.ServerChannel)
            ? ch.parent()
            : ch;
    ConnectionInfo info = c.attr(INFO).get();
    if (info != null) {
      return info;
    }
    SslHandler ssl = c.pipeline().get(SslHandler.class);
    ConnectionInfo made =
        ssl != null && ssl.handshakeFuture().isSuccess()
            ? ConnectionInfo.tls(c.remoteAddress(), c.localAddress(), ssl.engine().getSession())
            : ConnectionInfo.plaintext(c.remoteAddress(), c.localAddress());
    if (ssl != null && !ssl.handshakeFuture().isDone()) {
      return made; // not cached: the handshake is not over
    }
    ConnectionInfo previous = c.attr(INFO).setIfAbsent(made);
    return previous == null ? made : previous;
  }
}
