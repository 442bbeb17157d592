package io.yarpc.encoding.protobuf.internal;

import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs tasks one at a time, in submission order, on a delegate executor: grpc-java's listeners must never
 * be called concurrently or re-entrantly. A task submitted from inside a running task runs after it. With
 * a direct delegate ({@code Runnable::run}) tasks run on the submitting thread unless another thread is
 * already draining, in which case that thread runs them.
 */
final class SerialExecutor implements Executor, Runnable {
  private static final Logger log = LoggerFactory.getLogger(SerialExecutor.class);

  private final Executor delegate;
  // The pending tasks, oldest first: head, then the rest. A unary call's callbacks never need the
  // rest (each is submitted while the one before runs), so it is made only when needed.
  private Runnable head; // guarded by this
  private ArrayDeque<Runnable> rest; // guarded by this
  private boolean running; // guarded by this

  /** Runs tasks on {@code delegate}. */
  public SerialExecutor(Executor delegate) {
    this.delegate = delegate;
  }

  @Override
  public void execute(Runnable task) {
    synchronized (this) {
      if (head == null) {
        head = task; // nothing pending, so nothing older is in rest either
      } else {
        if (rest == null) {
          rest = new ArrayDeque<>(4);
        }
        rest.add(task);
      }
      if (running) {
        return;
      }
      running = true;
    }
    try {
      delegate.execute(this);
    } catch (RejectedExecutionException e) {
      run(); // the delegate shut down: run here rather than lose the listener's callbacks
    }
  }

  /** Drains the pending tasks; what {@link #execute} hands the delegate (not for other callers). */
  @Override
  public void run() {
    while (true) {
      Runnable next;
      synchronized (this) {
        next = head;
        if (next == null) {
          running = false;
          return;
        }
        head = rest == null ? null : rest.poll();
      }
      try {
        next.run();
      } catch (Throwable t) {
        log.warn("a grpc listener callback threw", t);
      }
    }
  }
}
