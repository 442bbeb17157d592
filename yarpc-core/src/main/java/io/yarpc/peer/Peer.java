package io.yarpc.peer;

/**
 * One remote address a transport can send calls to. The transport owns its peers: it creates one per
 * identifier, keeps it while any chooser retains it, and reports status changes to the subscribers.
 */
public interface Peer {
  /** The peer's identifier, usually {@code host:port}. */
  String identifier();

  /** Whether the peer can take calls now. */
  ConnectionStatus status();
}
