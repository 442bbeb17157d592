package io.yarpc.observability.logging;

/**
 * How a call ended, for choosing the level of its log line: classified as yarpc-go classifies it, by the
 * code's fault type ({@link io.yarpc.errors.Code#faultType()}).
 */
public enum CallOutcome {
  /** The call succeeded. */
  SUCCESS,
  /**
   * The call failed through the caller's fault: codes {@code cancelled}, {@code invalid-argument}, {@code
   * not-found}, {@code already-exists}, {@code permission-denied}, {@code resource-exhausted}, {@code
   * failed-precondition}, {@code aborted}, {@code out-of-range}, {@code unimplemented}, {@code
   * unauthenticated}, and application errors without a code.
   */
  CALLER_FAILURE,
  /**
   * The call failed through the server's fault: codes {@code unknown}, {@code deadline-exceeded}, {@code
   * internal}, {@code unavailable}, {@code data-loss}, and failures that are not YARPC errors.
   */
  SERVER_FAILURE
}
