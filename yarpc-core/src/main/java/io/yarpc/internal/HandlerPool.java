package io.yarpc.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dispatcher's default handler executor: a thread per task in progress, up to a maximum, idle threads
 * reused (the most recently idle first) and ended after a keep-alive; a task beyond the maximum is
 * rejected. That is a {@code ThreadPoolExecutor} with no core threads on a {@code SynchronousQueue}, which
 * this replaces because its hand-off allocates queue nodes on every task: here a task is handed to an idle
 * thread by writing it into that thread's own slot, so {@link #execute} allocates nothing once the threads
 * exist.
 *
 * <p>Thread-safe. {@link #shutdown} refuses new tasks and lets idle threads end; tasks already handed on
 * run to completion. {@link #shutdownNow} does the same and interrupts the running ones; it returns no
 * tasks, as none ever waits in a queue.
 */
public final class HandlerPool extends AbstractExecutorService {
  private static final Logger log = LoggerFactory.getLogger(HandlerPool.class);

  private final String namePrefix;
  private final int maxThreads;
  private final long keepAliveNanos;
  private final AtomicInteger names = new AtomicInteger();

  private final Object lock = new Object();
  private final Worker[] idle; // guarded by lock: a stack, idle[idleCount - 1] idle most recently
  private int idleCount; // guarded by lock
  private final List<Worker> all = new ArrayList<>(); // guarded by lock: every live thread
  private boolean shutdown; // guarded by lock

  /**
   * A pool of up to {@code maxThreads} daemon threads named {@code namePrefix} followed by a number, an
   * idle one ending after {@code keepAliveNanos}.
   */
  public HandlerPool(String namePrefix, int maxThreads, long keepAliveNanos) {
    if (maxThreads < 1) {
      throw new IllegalArgumentException("maxThreads must be at least 1: " + maxThreads);
    }
    this.namePrefix = namePrefix;
    this.maxThreads = maxThreads;
    this.keepAliveNanos = keepAliveNanos;
    this.idle = new Worker[maxThreads];
  }

  /**
   * Runs {@code task} on an idle thread, or a new one while fewer than the maximum exist.
   *
   * @throws RejectedExecutionException when all threads are busy, or after shutdown
   */
  @Override
  public void execute(Runnable task) {
    if (task == null) {
      throw new NullPointerException("task");
    }
    Worker w;
    synchronized (lock) {
      if (shutdown) {
        throw new RejectedExecutionException("the handler pool is shut down");
      }
      if (idleCount > 0) {
        w = idle[--idleCount];
        idle[idleCount] = null;
        w.task = task;
      } else if (all.size() < maxThreads) {
        w = new Worker(task);
        all.add(w);
      } else {
        throw new RejectedExecutionException("all " + maxThreads + " handler threads are busy");
      }
    }
    if (w.started) {
      LockSupport.unpark(w.thread);
    } else {
      w.started = true; // only here, once: the worker is new and nobody else has it
      w.thread.start(); // outside the lock: starting a thread takes a while
    }
  }

  /** Threads alive, busy or idle (for tests). */
  int threads() {
    synchronized (lock) {
      return all.size();
    }
  }

  /** Threads waiting for a task (for tests). */
  int idleThreads() {
    synchronized (lock) {
      return idleCount;
    }
  }

  @Override
  public void shutdown() {
    List<Worker> waiting = new ArrayList<>();
    synchronized (lock) {
      shutdown = true;
      for (int i = 0; i < idleCount; i++) {
        waiting.add(idle[i]);
      }
    }
    waiting.forEach(w -> LockSupport.unpark(w.thread));
  }

  @Override
  public List<Runnable> shutdownNow() {
    shutdown();
    synchronized (lock) {
      all.forEach(w -> w.thread.interrupt());
    }
    return List.of();
  }

  @Override
  public boolean isShutdown() {
    synchronized (lock) {
      return shutdown;
    }
  }

  @Override
  public boolean isTerminated() {
    synchronized (lock) {
      return shutdown && all.isEmpty();
    }
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    long until = System.nanoTime() + unit.toNanos(timeout);
    synchronized (lock) {
      while (!(shutdown && all.isEmpty())) {
        long left = until - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        TimeUnit.NANOSECONDS.timedWait(lock, left);
      }
      return true;
    }
  }

  private final class Worker implements Runnable {
    final Thread thread;
    boolean started; // by the execute that created it (an idle worker was started long ago)
    volatile Runnable task; // written under lock by execute, taken by this thread

    Worker(Runnable first) {
      this.task = first;
      this.thread = new Thread(this, namePrefix + names.incrementAndGet());
      thread.setDaemon(true);
    }

    @Override
    public void run() {
      try {
        Runnable next;
        while ((next = take()) != null) {
          try {
            next.run();
          } catch (Throwable t) { // as a pool thread would report it, without losing the thread
            log.warn("a handler task failed", t);
          }
          Thread.interrupted(); // shutdownNow's interrupt was for that task
        }
      } finally {
        synchronized (lock) {
          all.remove(this);
          lock.notifyAll(); // awaitTermination
        }
      }
    }

    /** The next task: the one at hand, else one handed on while idle; null to end the thread. */
    private Runnable take() {
      Runnable t = task;
      if (t != null) {
        task = null;
        return t;
      }
      synchronized (lock) {
        if (shutdown) {
          return null;
        }
        idle[idleCount++] = this;
      }
      long until = System.nanoTime() + keepAliveNanos;
      while (true) {
        t = task;
        if (t != null) {
          task = null;
          return t;
        }
        long left = until - System.nanoTime();
        boolean isShutdown;
        synchronized (lock) {
          isShutdown = shutdown;
        }
        if (left <= 0 || isShutdown) {
          synchronized (lock) {
            t = task; // handed on just now: run it rather than drop it
            if (t != null) {
              task = null;
              return t;
            }
            removeIdle(this);
            return null;
          }
        }
        LockSupport.parkNanos(this, left);
      }
    }
  }

  /** Takes {@code w} off the idle stack (lock held). */
  private void removeIdle(Worker w) {
    for (int i = idleCount - 1; i >= 0; i--) {
      if (idle[i] == w) {
        System.arraycopy(idle, i + 1, idle, i, idleCount - i - 1);
        idle[--idleCount] = null;
        return;
      }
    }
  }
}
