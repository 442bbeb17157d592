package io.yarpc.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.PriorityQueue;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
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
 *   <li><b>No lock.</b> Scheduling pushes the task onto a lock-free stack (one compare-and-set) that the
 *       timer thread drains into its own deadline heap when it wakes; cancelling is one compare-and-set on
 *       the task and one atomic count. Only the timer thread touches the heap.
 *   <li><b>Cancelled tasks keep nothing alive.</b> Cancelling drops the task's target at once (it may hold
 *       a call's response), and once cancelled tasks are at least half of those held (and {@value
 *       #MIN_PURGE} or more) the canceller wakes the timer thread, which removes them in one linear pass:
 *       cancelling costs amortised O(1) and the tasks held stay within about twice the live ones.
 * </ul>
 *
 * <p>A task is the handle its scheduler keeps; it runs a function of one target ({@link #schedule(Consumer,
 * Object, long)}), so a caller whose per-call object is the target and whose function is a method
 * reference capturing nothing allocates the task alone.
 */
final class DeadlineTimer {
  private static final Logger log = LoggerFactory.getLogger(DeadlineTimer.class);

  /** Cancelled tasks tolerated before a purge is considered. */
  static final int MIN_PURGE = 1024;

  /** Longer delays are cut to this (about 73 years), so that deadlines never overflow {@code nanoTime}. */
  private static final long MAX_DELAY_NANOS = Long.MAX_VALUE >> 2;

  // what the timer thread is doing, for schedulers deciding whether to wake it
  private static final int AWAKE = 0; // it drains the stack before it sleeps again: nobody wakes it
  private static final int SLEEPING_UNTIL = 1; // until sleepingUntil
  private static final int SLEEPING_FOREVER = 2; // nothing queued

  private static final VarHandle INBOX;

  static {
    try {
      INBOX = MethodHandles.lookup().findVarHandle(DeadlineTimer.class, "inbox", Task.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final Thread worker;

  @SuppressWarnings("unused") // through INBOX
  private volatile Task inbox; // scheduled, not yet in the heap: a stack linked by Task.next

  /** Cancelled tasks still held (in the stack or the heap); approximate while a cancel is under way. */
  private final AtomicInteger cancelledHeld = new AtomicInteger();

  private volatile boolean purgeRequested;
  private volatile int sleepState = AWAKE;
  private volatile long sleepingUntil; // written before sleepState
  private volatile int heapSize; // published by the timer thread after each pass
  private volatile long passes; // written by the timer thread only

  // the timer thread's own
  private final PriorityQueue<Task> heap = new PriorityQueue<>();
  private long nextOrder;

  DeadlineTimer(String threadName) {
    worker = new Thread(this::work, threadName);
    worker.setDaemon(true);
    worker.start();
  }

  /** Runs {@code action} on the timer thread after {@code delayNanos} (at once when not positive). */
  Task schedule(Runnable action, long delayNanos) {
    return schedule(Runnable::run, action, delayNanos);
  }

  /**
   * Runs {@code function.accept(target)} on the timer thread after {@code delayNanos} (at once when not
   * positive). The task holds {@code target} until it runs or is cancelled.
   */
  <T> Task schedule(Consumer<? super T> function, T target, long delayNanos) {
    long delay = Math.min(Math.max(0, delayNanos), MAX_DELAY_NANOS);
    Task task = new Task(this, function, target, System.nanoTime() + delay);
    Task head;
    do {
      head = (Task) INBOX.getVolatile(this);
      task.next = head;
      task.depth = head == null ? 1 : head.depth + 1;
    } while (!INBOX.compareAndSet(this, head, task));
    int state = sleepState;
    if (state == SLEEPING_FOREVER
        || (state == SLEEPING_UNTIL && task.deadline - sleepingUntil < 0)) {
      LockSupport.unpark(worker);
    }
    return task;
  }

  /** Tasks held, cancelled or not (for tests); approximate while tasks are being scheduled. */
  int queued() {
    Task head = (Task) INBOX.getVolatile(this);
    return heapSize + (head == null ? 0 : head.depth);
  }

  /** How many times the timer thread woke and went through its queue (for tests). */
  long passes() {
    return passes;
  }

  private void cancelled() {
    int cancelled = cancelledHeld.incrementAndGet();
    if (cancelled >= MIN_PURGE && 2L * cancelled >= queued() && !purgeRequested) {
      purgeRequested = true;
      LockSupport.unpark(worker);
    }
  }

  private void work() {
    while (true) {
      try {
        pass();
      } catch (Throwable t) { // never let the one timer thread die
        log.warn("the timer thread failed; it carries on", t);
      }
    }
  }

  /** Drains the stack, purges if asked, runs what is due, then sleeps until the next deadline. */
  private void pass() {
    Thread.interrupted(); // nobody should; a set flag would turn every park below into a spin
    int dropped = drain();
    if (purgeRequested) {
      purgeRequested = false;
      int before = heap.size();
      heap.removeIf(Task::isCancelled);
      dropped += before - heap.size();
    }
    Task head;
    while ((head = heap.peek()) != null) {
      if (head.isCancelled()) {
        heap.poll();
        dropped++;
        continue;
      }
      if (head.deadline - System.nanoTime() > 0) {
        break;
      }
      heap.poll();
      try {
        if (!head.runIfStillScheduled()) {
          dropped++; // cancelled since it was looked at
        }
      } catch (Throwable t) {
        log.warn("a timer task failed", t);
      }
    }
    heapSize = heap.size();
    passes++; // the timer thread's only writer
    if (dropped > 0) {
      cancelledHeld.addAndGet(-dropped);
    }

    // Announce the sleep, then look again: a scheduler either sees the announcement (and wakes this
    // thread if its task is due earlier) or pushed before the look below (and the next pass takes
    // it).
    long until = head == null ? 0 : head.deadline;
    sleepingUntil = until;
    sleepState = head == null ? SLEEPING_FOREVER : SLEEPING_UNTIL;
    if (INBOX.getVolatile(this) == null && !purgeRequested) {
      if (head == null) {
        LockSupport.park(this);
      } else {
        long delay = until - System.nanoTime();
        if (delay > 0) {
          LockSupport.parkNanos(this, delay);
        }
      }
    }
    sleepState = AWAKE;
  }

  /**
   * Moves the stack into the heap in scheduling order; returns how many cancelled tasks it dropped
   * instead.
   */
  private int drain() {
    Task stack = (Task) INBOX.getAndSet(this, null);
    Task reversed = null;
    while (stack != null) {
      Task next = stack.next;
      stack.next = reversed;
      reversed = stack;
      stack = next;
    }
    int dropped = 0;
    while (reversed != null) {
      Task task = reversed;
      reversed = task.next;
      task.next = null;
      if (task.isCancelled()) {
        dropped++;
      } else {
        task.order = nextOrder++;
        heap.add(task);
      }
    }
    return dropped;
  }

  /** A scheduled task: its handle for cancelling, ordered by deadline then by scheduling order. */
  static final class Task implements ScheduledFuture<Object> {
    private static final int SCHEDULED = 0;
    private static final int RAN = 1;
    private static final int CANCELLED = 2;
    private static final VarHandle STATE;

    static {
      try {
        STATE = MethodHandles.lookup().findVarHandle(Task.class, "state", int.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    private final DeadlineTimer timer;
    private final long deadline;
    private Consumer<Object> function; // both dropped when the task runs or is cancelled
    private Object target;
    private volatile int state;
    // the timer's: the stack's link and depth (set before the push publishes the task), then order
    private Task next;
    private int depth;
    private long order;

    @SuppressWarnings("unchecked")
    Task(DeadlineTimer timer, Consumer<?> function, Object target, long deadline) {
      this.timer = timer;
      this.function = (Consumer<Object>) function;
      this.target = target;
      this.deadline = deadline;
    }

    /** Runs the task unless it was cancelled; whether it ran. */
    boolean runIfStillScheduled() {
      if (!STATE.compareAndSet(this, SCHEDULED, RAN)) {
        return false;
      }
      Consumer<Object> f = function;
      Object t = target;
      function = null;
      target = null;
      f.accept(t);
      return true;
    }

    /**
     * Cancels the task if it has not started; what it would have run is dropped at once. Once this returns
     * {@code true} the task never runs.
     */
    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      if (!STATE.compareAndSet(this, SCHEDULED, CANCELLED)) {
        return false;
      }
      function = null;
      target = null;
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
