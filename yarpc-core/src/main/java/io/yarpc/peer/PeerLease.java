package io.yarpc.peer;

/**
 * A peer chosen for one call. The outbound must end it exactly once when the call ends — {@link
 * #finish(Throwable)} with the call's outcome, or {@link #abandon()} when nothing was sent to the peer —
 * so the chooser can keep pending-request counts and, with {@linkplain OutlierDetection outlier
 * detection}, learn which peers fail. Later calls of either method do nothing.
 */
public interface PeerLease {
  /** The chosen peer. */
  Peer peer();

  /**
   * Reports the end of the call: {@code error} is null on success, else what the call failed with (an
   * error response the transport turns into an exception counts: finish after reading the response).
   * Report a call the transport cut off because the caller gave up or the deadline passed with the
   * cancellation it saw.
   */
  void finish(Throwable error);

  /**
   * Reports that the call ended before anything was sent to the peer (the caller gave up while the peer
   * was being chosen or connected): the chooser learns nothing about the peer. The default {@linkplain
   * #finish finishes} with no error.
   */
  default void abandon() {
    finish(null);
  }
}
