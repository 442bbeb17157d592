package io.yarpc.transport.grpc.internal;

import io.grpc.Attributes;
import io.grpc.Grpc;
import io.grpc.ServerCall;
import io.grpc.ServerTransportFilter;
import io.yarpc.transport.ConnectionInfo;
import java.net.SocketAddress;
import javax.net.ssl.SSLSession;

/**
 * The {@link ConnectionInfo} of the inbound's calls, made once per connection: registered as the server's
 * transport filter, it reads the connection's attributes when grpc-java reports it ready (after the TLS
 * handshake and the HTTP/2 preface) and adds the info to them, so every call on the connection finds the
 * same object in {@link ServerCall#getAttributes()} without allocating. Stateless; thread-safe.
 */
public final class ConnectionInfos extends ServerTransportFilter {
  private static final Attributes.Key<ConnectionInfo> INFO =
      Attributes.Key.create("io.yarpc.transport.grpc.connection");

  @Override
  public Attributes transportReady(Attributes attributes) {
    return attributes.toBuilder().set(INFO, from(attributes)).build();
  }

  /** The connection {@code call} arrived on. */
  public static ConnectionInfo of(ServerCall<?, ?> call) {
    Attributes attributes = call.getAttributes();
    if (attributes == null) {
      return ConnectionInfo.plaintext(null, null);
    }
    ConnectionInfo info = attributes.get(INFO);
    return info != null ? info : from(attributes); // a server without the filter (not ours)
  }

  private static ConnectionInfo from(Attributes a) {
    SocketAddress remote = a.get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
    SocketAddress local = a.get(Grpc.TRANSPORT_ATTR_LOCAL_ADDR);
    SSLSession session = a.get(Grpc.TRANSPORT_ATTR_SSL_SESSION);
    return session != null
        ? ConnectionInfo.tls(remote, local, session)
        : ConnectionInfo.plaintext(remote, local);
  }
}
