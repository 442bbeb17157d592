package io.yarpc.transport.http.internal;

import io.netty.handler.ssl.ApplicationProtocolNames;
import io.yarpc.netty.internal.ReloadingSslContext;
import io.yarpc.tls.TlsConfig;
import java.util.List;

/**
 * The TLS contexts of a transport's {@code https} peers: one offering ALPN {@code http/1.1} for HTTP/1.1
 * connections, one offering {@code h2} for HTTP/2 connections, both from the transport's {@link TlsConfig},
 * or from a default one (the JDK's trust store, hostname verification) when it has none. A given config's
 * contexts are built at once, so a transport with unreadable material fails to start; the default's on first
 * use, so a transport that never calls an {@code https} peer never loads the trust store. Thread-safe.
 */
public final class OutboundTls {
  private final TlsConfig config;
  private volatile ReloadingSslContext http1;
  private volatile ReloadingSslContext http2;

  /**
   * The contexts for {@code config}, or for the default config when it is null.
   *
   * @throws IllegalStateException when {@code config}'s material cannot be read
   */
  public OutboundTls(TlsConfig config) {
    this.config = config;
    if (config != null) {
      http1 = ReloadingSslContext.client(config, List.of(ApplicationProtocolNames.HTTP_1_1));
      http2 = ReloadingSslContext.client(config, List.of(ApplicationProtocolNames.HTTP_2));
    }
  }

  /**
   * The context of a new connection: offering {@code h2} when {@code h2}, else {@code http/1.1}.
   *
   * @throws IllegalStateException when the default context cannot be built (no usable trust store)
   */
  ReloadingSslContext context(boolean h2) {
    ReloadingSslContext c = h2 ? http2 : http1;
    return c != null ? c : defaults(h2);
  }

  private synchronized ReloadingSslContext defaults(boolean h2) {
    if (http1 == null) {
      TlsConfig d = TlsConfig.builder().build();
      http1 = ReloadingSslContext.client(d, List.of(ApplicationProtocolNames.HTTP_1_1));
      http2 = ReloadingSslContext.client(d, List.of(ApplicationProtocolNames.HTTP_2));
    }
    return h2 ? http2 : http1;
  }

  @Override
  public String toString() {
    return "OutboundTls{" + (config != null ? config : "default") + "}";
  }
}
