package io.yarpc.internal;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * A pool for tasks that are usually quick but may block: a few threads take tasks from a queue, and more
 * are started only when queued tasks stop moving.
 *
 * <p>A cached pool (no queue) hands every task to a parked thread of its own: a wake-up and a context switch
 * per task, which measured as half of a small call's CPU on a two-core virtual machine. Here {@code base}
 * threads (the processor count, at least 2) take tasks from a queue; a thread that finishes a task takes
 * the next one without parking, so a burst costs at most a wake-up per idle thread.
 *
 * <p>A task that blocks must not hold up the others, so a watcher thread, running only while tasks are
 * queued, looks every {@link #PATIENCE_NANOS} whether any queued task was taken since its last look; once
 * nothing has moved for {@link #STALL_NANOS}, it starts a thread for each queued task, up to {@code
 * maxThreads}. (Asking the threads' states to start them sooner for threads that wait made it worse: a
 * thread just woken for a task still reads as waiting until it runs, which on a loaded machine takes
 * milliseconds, and the pool grew on every look.) Once no task has had to wait for {@link
 * #SHRINK_AFTER_NANOS}, the pool goes back to {@code base} threads (the others end when next idle). When
 * {@code maxThreads} threads are busy and {@code maxThreads} tasks are queued, {@code execute} rejects.
 * Threads end after a minute idle. Thread-safe.
 */
final class ElasticPool extends ThreadPoolExecutor {
  /** How often the watcher looks while tasks are queued. */
  static final long PATIENCE_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

  /** How long queued tasks may stand still behind runnable threads before threads are started. */
  static final long STALL_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

  /** How long after the last start of extra threads the pool goes back to its base size. */
  static final long SHRINK_AFTER_NANOS = TimeUnit.SECONDS.toNanos(1);

  /** Looks without queued tasks after which the watcher parks until a task is queued. */
  private static final int IDLE_AFTER_LOOKS = 50;

  private static final int RUNNING = 0;
  private static final int PARKED = 1;

  private final int base;
  private final Thread watcher;
  private final AtomicInteger watcherState = new AtomicInteger(RUNNING);
  private volatile long taken; // tasks taken from the queue; only compared, so racy increments do

  ElasticPool(int base, int maxThreads, ThreadFactory threads, ThreadFactory watcherThread) {
    super(base, Math.max(base, maxThreads), 60, TimeUnit.SECONDS, queue(maxThreads), threads);
    this.base = base;
    allowCoreThreadTimeOut(true);
    watcher = watcherThread.newThread(this::watch);
    watcher.start();
  }

  private static BlockingQueue<Runnable> queue(int maxThreads) {
    return maxThreads == Integer.MAX_VALUE
        ? new LinkedBlockingQueue<>()
        : new LinkedBlockingQueue<>(maxThreads);
  }

  /** The number of threads the pool keeps for quick tasks. */
  int base() {
    return base;
  }

  @Override
  public void execute(Runnable command) {
    super.execute(command);
    if (watcherState.get() == PARKED && watcherState.compareAndSet(PARKED, RUNNING)) {
      LockSupport.unpark(watcher);
    }
  }

  @Override
  protected void beforeExecute(Thread t, Runnable r) {
    taken++; // not atomic on purpose: the watcher only asks whether it changed
  }

  @Override
  protected void terminated() {
    LockSupport.unpark(watcher);
  }

  private void watch() {
    long lastTaken = taken;
    long stillSince = 0; // since when queued tasks stand still; 0: they move
    long grewAt = 0; // when extra threads were last started; 0: the pool is at its base
    int idleLooks = 0;
    while (!isShutdown()) {
      LockSupport.parkNanos(this, PATIENCE_NANOS);
      long now = System.nanoTime() | 1; // never 0
      long t = taken;
      int waiting = getQueue().size();
      boolean still = waiting > 0 && t == lastTaken;
      if (!still) {
        stillSince = 0;
      } else if (stillSince == 0) {
        stillSince = now;
      }
      if (still && now - stillSince >= STALL_NANOS - PATIENCE_NANOS) {
        int core = getCorePoolSize();
        int target = (int) Math.min((long) getMaximumPoolSize(), (long) core + waiting);
        if (target > core) {
          setCorePoolSize(target); // starts threads for the queued tasks
          grewAt = now;
        }
        stillSince = 0;
      } else if (grewAt != 0 && now - grewAt > SHRINK_AFTER_NANOS) {
        setCorePoolSize(base);
        grewAt = 0;
      }
      lastTaken = t;
      idleLooks = waiting > 0 ? 0 : idleLooks + 1;
      if (idleLooks >= IDLE_AFTER_LOOKS && grewAt == 0) {
        idleLooks = 0;
        watcherState.set(PARKED);
        if (getQueue().isEmpty() && !isShutdown()) {
          LockSupport.park(this); // until execute queues a task (or the pool terminates)
        }
        watcherState.set(RUNNING);
        lastTaken = taken;
      }
    }
  }
}
