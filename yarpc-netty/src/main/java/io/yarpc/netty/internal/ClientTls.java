package io.yarpc.netty.internal;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.SslHandler;

/** Makes the TLS handler of an outbound connection. Stateless. */
public final class ClientTls {
  private ClientTls() {}

  /**
   * A handler for a connection to {@code host:port}: it sends the config's server name, or {@code host},
   * as SNI and verifies the server's certificate against the same name unless the config turned
   * verification off.
   */
  public static SslHandler handler(
      ReloadingSslContext context,
      ByteBufAllocator alloc,
      String host,
      int port,
      long handshakeTimeoutMillis) {
    String name = context.config().serverName() != null ? context.config().serverName() : host;
    SslHandler h = context.newHandler(alloc, name, port);
    h.setHandshakeTimeoutMillis(Math.max(1, handshakeTimeoutMillis));
    return h;
  }
}
