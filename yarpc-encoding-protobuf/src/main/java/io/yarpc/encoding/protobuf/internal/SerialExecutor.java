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
 *
 * <p>Besides {@link Runnable}s it runs its owner's {@linkplain #step steps}: shared constants that the
 * owner ({@link Steps}) runs, so that a callback every call makes (a unary call's start, its message,
 * its end) costs no object of its own.
 */
final class SerialExecutor implements Executor, Runnable {
  /** What runs the steps queued with {@link #step}: the executor's owner. */
  interface Steps {
    /** Runs {@code step}, serially with the executor's other tasks. */
    void runStep(Object step);
  }

  private static final Logger log = LoggerFactory.getLogger(SerialExecutor.class);

  private final Executor delegate;
  private final Steps steps; // null: no steps
  // The pending tasks (Runnables or steps), oldest first: head, then the rest. A unary call's
  // callbacks never need the rest (each is submitted while the one before runs), so it is made only
  // when needed.
  private Object head; // guarded by this
  private ArrayDeque<Object> rest; // guarded by this
  private boolean running; // guarded by this

  /** Runs tasks on {@code delegate}. */
  public SerialExecutor(Executor delegate) {
    this(delegate, null);
  }

  /** Runs tasks on {@code delegate}, and {@code steps} runs the steps. */
  SerialExecutor(Executor delegate, Steps steps) {
    this.delegate = delegate;
    this.steps = steps;
  }

  @Override
  public void execute(Runnable task) {
    enqueue(task);
  }

  /**
   * Queues {@code step} (a shared constant the {@link Steps} owner knows, never a {@link Runnable}) to be
   * run by the owner in order with the other tasks.
   */
  void step(Object step) {
    if (steps == null || step instanceof Runnable) {
      throw new IllegalArgumentException("not a step of this executor: " + step);
    }
    enqueue(step);
  }

  private void enqueue(Object task) {
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
      Object next;
      synchronized (this) {
        next = head;
        if (next == null) {
          running = false;
          return;
        }
        head = rest == null ? null : rest.poll();
      }
      try {
        if (next instanceof Runnable r) {
          r.run();
        } else {
          steps.runStep(next);
        }
      } catch (Throwable t) {
        log.warn("a grpc listener callback threw", t);
      }
    }
  }
}
