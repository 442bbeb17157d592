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

  /**
   * A call is waiting for this peer: try to connect now instead of after the current reconnect backoff.
   * Choosers call it while calls wait, at most a few times a second per peer; a peer that is connecting
   * or available ignores it. Thread-safe; must not block. The default does nothing.
   */
  default void connectNow() {}

  /**
   * Why the peer is not available, for the error of a call that waited for it in vain: usually its
   * last connection failure ({@code Connection refused: /127.0.0.1:8080}); null when unknown. The
   * default returns null.
   */
  default String unavailableReason() {
    return null;
  }
}
