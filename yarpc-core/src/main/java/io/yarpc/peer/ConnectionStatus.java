package io.yarpc.peer;

/** Whether a peer can take calls now. */
public enum ConnectionStatus {
  /** Not reachable; choosers skip it. */
  UNAVAILABLE,
  /** A connection is being opened. */
  CONNECTING,
  /** Ready for calls. */
  AVAILABLE
}
