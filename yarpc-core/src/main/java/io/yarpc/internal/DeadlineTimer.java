package io.yarpc.internal;

import java.util.PriorityQueue;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One daemon thread running quick tasks at their deadlines, built for timers that are almost always
 * cancelled long before they fire (call deadlines).
 *
 * <ul>
 *   <li><b>No wake-up per call.</b> The thread sleeps until the earliest queued deadline and is woken only
 *       when a new task is due before that. A cancelled task stays queued (lazily removed), so between
 *       calls made one after the other the queue is not empty and a new, later deadline wakes nobody. A
 *       {@code ScheduledThreadPoolExecutor} that removes on cancel leaves the queue empty instead, and every
 *       schedule into an empty queue wakes its thread: measured, those wake-ups were most of YARPC's
 *       per-call CPU over gRPC at one call in flight.
 *   <li><b>Cancelled tasks keep nothing alive.</b> Cancelling drops the task's action at once (it may hold a
 *       call's response), and once cancelled tasks are at least half the queue (and {@value #MIN_PURGE} or
 *       more) they are removed in one linear pass, so cancelling costs amortised O(1) and the queue stays
 *       within twice the live tasks.
 * </ul>
 */
final class DeadlineTimer {
  private static final Logger log = LoggerFactory.getLogger(DeadlineTimer.class);

  /** Cancelled tasks tolerated in the queue before a purge is considered. */
  static final int MIN_PURGE = 1024;

  /** Longer delays are cut to this (about 73 years), so that deadlines never overflow {@code nanoTime}. */
  private static final long MAX_DELAY_NANOS = Long.MAX_VALUE >> 2;

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition due = lock.newCondition();
  private final PriorityQueue<Task> queue = new PriorityQueue<>();
  private final AtomicLong sequence = new AtomicLong();
  private int
      cancelledInQueue; // approximate: a task cancelled while being taken out is counted too
  private boolean sleeping; // the worker waits; for how long is sleepingUntil (or forever)
  private boolean sleepingForever;
  private long sleepingUntil;

  DeadlineTimer(String threadName) {
    Thread worker = new Thread(this::work, threadName);
    worker.setDaemon(true);
    worker.start();
  }

  /** Runs {@code action} on the timer thread after {@code delayNanos} (at once when not positive). */
  Task schedule(Runnable action, long delayNanos) {
    long delay = Math.min(Math.max(0, delayNanos), MAX_DELAY_NANOS);
    Task task = new Task(this, action, System.nanoTime() + delay, sequence.getAndIncrement());
    lock.lock();
    try {
      queue.add(task);
      if (sleeping && (sleepingForever || task.deadline - sleepingUntil < 0)) {
        due.signal();
      }
    } finally {
      lock.unlock();
    }
    return task;
  }

  /** Tasks queued, cancelled or not (for tests). */
  int queued() {
    lock.lock();
    try {
      return queue.size();
    } finally {
      lock.unlock();
    }
  }

  private void cancelled() {
    lock.lock();
    try {
      cancelledInQueue++;
      if (cancelledInQueue >= MIN_PURGE && cancelledInQueue * 2L >= queue.size()) {
        queue.removeIf(Task::isCancelled);
        cancelledInQueue = 0;
      }
    } finally {
      lock.unlock();
    }
  }

  private void work() {
    lock.lock();
    try {
      while (true) {
        Task head = queue.peek();
        if (head == null) {
          sleepUninterruptibly(-1);
          continue;
        }
        if (head.isCancelled()) {
          queue.poll();
          cancelledInQueue = Math.max(0, cancelledInQueue - 1);
          continue;
        }
        long delay = head.deadline - System.nanoTime();
        if (delay > 0) {
          sleepingUntil = head.deadline;
          sleepUninterruptibly(delay);
          continue;
        }
        queue.poll();
        lock.unlock();
        try {
          head.runIfStillScheduled();
        } catch (Throwable t) {
          log.warn("a timer task failed", t);
        } finally {
          lock.lock();
        }
      }
    } finally {
      lock.unlock();
    }
  }

  /** Waits (lock held) until signalled or {@code nanos} pass; forever when negative. */
  private void sleepUninterruptibly(long nanos) {
    sleeping = true;
    sleepingForever = nanos < 0;
    try {
      if (nanos < 0) {
        due.awaitUninterruptibly();
      } else {
        due.awaitNanos(nanos);
      }
    } catch (InterruptedException ignored) {
      // the timer thread is never interrupted on purpose; carry on
    } finally {
      sleeping = false;
    }
  }

  /** A scheduled task: its handle for cancelling, ordered by deadline then by scheduling order. */
  static final class Task implements ScheduledFuture<Object> {
    private static final int SCHEDULED = 0;
    private static final int RAN = 1;
    private static final int CANCELLED = 2;
    private static final AtomicIntegerFieldUpdater<Task> STATE =
        AtomicIntegerFieldUpdater.newUpdater(Task.class, "state");

    private final DeadlineTimer timer;
    private final long deadline;
    private final long order;
    private volatile Runnable action;
    private volatile int state;

    Task(DeadlineTimer timer, Runnable action, long deadline, long order) {
      this.timer = timer;
      this.action = action;
      this.deadline = deadline;
      this.order = order;
    }

    void runIfStillScheduled() {
      Runnable a = action;
      if (STATE.compareAndSet(this, SCHEDULED, RAN)) {
        action = null;
        a.run();
      }
    }

    /** Cancels the task if it has not started; its action is dropped at once. */
    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      if (!STATE.compareAndSet(this, SCHEDULED, CANCELLED)) {
        return false;
      }
      action = null;
      timer.cancelled();
      return true;
    }

    @Override
    public boolean isCancelled() {
      return state == CANCELLED;
    }

    @Override
    public boolean isDone() {
      return state != SCHEDULED;
    }

    @Override
    public long getDelay(TimeUnit unit) {
      return unit.convert(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
    }

    @Override
    public int compareTo(Delayed other) {
      if (other instanceof Task) {
        Task o = (Task) other;
        long d = deadline - o.deadline;
        return d != 0 ? (d < 0 ? -1 : 1) : Long.compare(order, o.order);
      }
      return Long.compare(getDelay(TimeUnit.NANOSECONDS), other.getDelay(TimeUnit.NANOSECONDS));
    }

    /** Timer tasks produce no value; waiting for one is not supported. */
    @Override
    public Object get() {
      throw new UnsupportedOperationException("timer tasks are not awaited");
    }

    @Override
    public Object get(long timeout, TimeUnit unit) {
      throw new UnsupportedOperationException("timer tasks are not awaited");
    }
  }
}
