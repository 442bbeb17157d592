package io.yarpc.transport.tchannel.internal;

import io.yarpc.transport.KeepAlive;
import io.yarpc.transport.Router;

/**
 * What a {@link Connection} needs from the side that owns it: the transport for connections it dialled
 * for a peer, an inbound for connections it accepted.
 */
public interface ConnectionHost {
  /** Shared settings. */
  Settings settings();

  /** What the connection enforces against its peer. */
  ConnectionLimits limits();

  /** The router that serves calls arriving on the connection, or {@code null} when nothing serves them. */
  Router router();

  /** The {@code host_port} this side advertises in its init frame. */
  String localHostPort();

  /**
   * The keepalive of the connection once its handshake is done (see {@link
   * io.yarpc.transport.KeepAlive}), or null for none: the transport's for connections it dialled; none for
   * accepted ones, which only answer pings.
   */
  default KeepAlive keepAlive() {
    return null;
  }

  /** The connection completed its handshake (called on its event loop). */
  default void onHandshake(Connection connection) {}

  /** The connection closed (called on its event loop, once). */
  default void onClose(Connection connection) {}
}
