package io.yarpc.peer;

/**
 * A peer chosen for one call. The outbound must call {@link #finish(Throwable)} exactly once when the call
 * ends, so the chooser can keep pending-request counts.
 */
public interface PeerLease {
  /** The chosen peer. */
  Peer peer();

  /** Reports the end of the call; {@code error} is null on success. Later calls do nothing. */
  void finish(Throwable error);
}
