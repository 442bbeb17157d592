package io.yarpc.transport;

/**
 * Something that starts and stops: transports, inbounds, outbounds, peer choosers. Both calls are
 * idempotent; {@link AbstractLifecycle} implements that once for everyone.
 */
public interface Lifecycle {
  /** Starts; a second call does nothing. Throws when it fails to start. */
  void start();

  /** Stops; a second call, or a call before {@link #start()}, does nothing harmful. */
  void stop();

  /** Whether it has started and not stopped. */
  boolean isRunning();
}
