package io.yarpc.observability.observer.internal;

/**
 * What {@link ObservingMiddleware} tells about calls: implemented by the metrics and by the call logs.
 * One instance serves every call, concurrently; methods are called on the threads the call runs on
 * (handler threads, transport I/O threads, timer threads), so they must be quick and must not block. An
 * exception thrown here is caught and logged by the middleware, never seen by the call.
 *
 * <p>Order for a unary or oneway call: {@link #begin}, then {@link #end} once. For a stream: {@link
 * #begin}, then {@link #streamOpened} once (on the server before the handler runs, on the client when the
 * stream is open or failed to open), then any number of {@link #streamMessage}, then {@link
 * #streamClosed} once if it opened.
 */
public interface CallObserver {
  /** A call reached the middleware. */
  void begin(ObservedCall call);

  /**
   * A unary or oneway call ended with {@code outcome}; {@link ObservedCall#elapsedNanos()} and {@link
   * ObservedCall#responseBytes()} are set.
   */
  void end(ObservedCall call, Outcome outcome);

  /**
   * A stream opened ({@code outcome} a success) or failed to open (then {@link #streamClosed} does not
   * follow; {@link ObservedCall#elapsedNanos()} is set).
   */
  void streamOpened(ObservedCall call, Outcome outcome);

  /**
   * A stream message was sent ({@code sent}) or received; {@code bytes} is its body's length (-1 when
   * unknown, and for the end of the stream); {@code error} is null, or the failure's {@code error} tag
   * ({@link Outcome#errorTagOf}).
   */
  void streamMessage(ObservedCall call, boolean sent, long bytes, String error);

  /** An open stream ended with {@code outcome}; {@link ObservedCall#elapsedNanos()} is set. */
  void streamClosed(ObservedCall call, Outcome outcome);
}
