package io.yarpc.transport;

/**
 * Idempotent {@link Lifecycle} for transport authors: implement {@link #doStart()} and {@link #doStop()};
 * each runs at most once. A failed start leaves the object stopped (after calling {@link #doStop()} to
 * clean up what was started). Stop before start goes straight to stopped. A component's calls made while
 * it is not running fail with {@code unavailable} ({@code ... is not running}).
 */
public abstract class AbstractLifecycle implements Lifecycle {
  private enum State {
    IDLE,
    RUNNING,
    STOPPED
  }

  private volatile State state = State.IDLE; // written under this object's lock, read without it

  /** Starts the component; called at most once. */
  protected abstract void doStart() throws Exception;

  /** Stops the component; called at most once, and only after {@link #doStart()} was called. */
  protected abstract void doStop() throws Exception;

  @Override
  public final synchronized void start() {
    if (state != State.IDLE) {
      if (state == State.STOPPED) {
        throw new IllegalStateException(this + " was stopped and cannot start again");
      }
      return;
    }
    try {
      doStart();
      state = State.RUNNING;
    } catch (Exception | Error e) {
      state = State.STOPPED;
      try {
        doStop();
      } catch (Exception | Error suppressed) {
        e.addSuppressed(suppressed);
      }
      if (e instanceof Error) {
        throw (Error) e;
      }
      throw e instanceof RuntimeException
          ? (RuntimeException) e
          : new IllegalStateException("failed to start " + this + ": " + e.getMessage(), e);
    }
  }

  @Override
  public final synchronized void stop() {
    State previous = state;
    state = State.STOPPED;
    if (previous == State.RUNNING) {
      try {
        doStop();
      } catch (RuntimeException e) {
        throw e;
      } catch (Exception e) {
        throw new IllegalStateException("failed to stop " + this + ": " + e.getMessage(), e);
      }
    }
  }

  /** Whether started and not stopped; a volatile read, cheap enough for every call to check. */
  @Override
  public final boolean isRunning() {
    return state == State.RUNNING;
  }
}
