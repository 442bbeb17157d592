package io.yarpc.transport.tchannel.internal;

/**
 * A peer broke the protocol. Carries the error frame to answer with: its code and message, and whether
 * the error is fatal to the connection (an {@link ErrorCodes#FATAL} frame, then close) or only ends the
 * message it belongs to (the connection stays open). Thrown and caught inside the transport; it never
 * reaches users. No stack trace: it is control flow.
 */
final class ProtocolException extends Exception {
  private static final long serialVersionUID = 1L;

  private final int errorCode;
  private final boolean fatal;
  private final boolean tooLarge;

  private ProtocolException(int errorCode, String message, boolean fatal, boolean tooLarge) {
    super(message, null, false, false);
    this.errorCode = errorCode;
    this.fatal = fatal;
    this.tooLarge = tooLarge;
  }

  /**
   * A message larger than the limit: a request is answered with a bad-request error frame (not busy:
   * tchannel-go and tchannel-node retry busy on another peer, which would send the same oversized request
   * again), a response fails its call with {@code resource-exhausted}.
   */
  public static ProtocolException tooLarge(String message) {
    return new ProtocolException(ErrorCodes.BAD_REQUEST, message, false, true);
  }

  /** Whether the message broke the size limit. */
  public boolean isTooLarge() {
    return tooLarge;
  }

  /** A fatal protocol error: error frame 0xFF, then the connection closes. */
  public static ProtocolException fatal(String message) {
    return new ProtocolException(ErrorCodes.FATAL, message, true, false);
  }

  /** A bad request: error frame 0x06 for the message; the connection stays open. */
  public static ProtocolException badRequest(String message) {
    return new ProtocolException(ErrorCodes.BAD_REQUEST, message, false, false);
  }

  /** An error that ends one message with {@code errorCode}; the connection stays open. */
  public static ProtocolException of(int errorCode, String message) {
    return new ProtocolException(errorCode, message, false, false);
  }

  /** The error frame's code. */
  public int errorCode() {
    return errorCode;
  }

  /** Whether the connection must close after the error frame. */
  public boolean isFatal() {
    return fatal;
  }
}
