package io.yarpc.internal;

import static java.util.Objects.requireNonNull;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A pool for tasks that are usually quick but may block (handlers, listener callbacks): tasks wait in a
 * queue for a few threads, and tasks that wait behind blocked threads get threads of their own, as in a
 * cached pool.
 *
 * <p><b>Why not a cached pool.</b> A cached pool ({@code ThreadPoolExecutor} over a {@code
 * SynchronousQueue}) hands every task to a parked thread: a wake-up and a context switch per task, and the
 * thread parks again after it. On a two-core virtual machine that measured as half of a small call's CPU.
 * Here a thread that finishes a task takes the next queued one without parking, a task is handed to at
 * most one woken thread, and the most recently idle thread is woken first (its caches are warm; threads
 * at the bottom of the idle stack are the ones that end after {@code keepAlive}).
 *
 * <p><b>Blocking.</b> A thread that runs a task is <i>working</i> (it will soon be free) or <i>blocked</i>.
 * For its task's first {@code patience} it is working. After that it is blocked while it waits as the
 * JVM sees it (parked, sleeping, waiting for a monitor: not {@link Thread.State#RUNNABLE}) or, being
 * {@code RUNNABLE}, as the operating system sees it: in the kernel waiting for a socket, a pipe or a
 * disk ({@link OsThreadState}; the JVM calls a thread in a plain socket's read {@code RUNNABLE} too, and
 * a {@code RUNNABLE} thread on a futex is only stopped for a safepoint or the like). It is working while
 * it computes or is ready to run and waits for a core, and while it waits for this pool's lock (it waits
 * for a thread that holds the lock and has no core). After {@value #RUNNING_PATIENCE_FACTOR} × {@code
 * patience} it is blocked whatever it does (a task that long starves the ones behind it). Without the
 * operating system's view (not Linux), a {@code RUNNABLE} thread is blocked after {@code patience}, as
 * any thread is.
 *
 * <p>A task is handed to a thread at once (an idle one, the most recently idle first, else a new one)
 * while fewer than {@code base} threads are working; otherwise it waits in the queue. While tasks wait,
 * a one-shot look on the shared timer (when the oldest will have waited {@code patience}; then a quarter
 * {@code patience} later while it starts threads, else when a working thread's task reaches {@code
 * patience}, or a {@code patience} later) starts threads for them: enough to bring the working threads
 * back to {@code base}, or, when more, one for each blocked thread whose task has started fewer than
 * {@value #STARTS_PER_BLOCKED_TASK}, up to the tasks that have waited {@code patience}. So blocked
 * threads do not count against {@code base}; a task waits behind a thread that has just begun to block
 * for about {@code patience}; a workload that blocks gets as many threads as it has tasks blocked, its
 * threads multiplying up to five times every {@code patience} (where a cached pool starts them at once);
 * and tasks that wait only because the cores are busy start no threads, which would only share the same
 * cores, while a thread that blocks in front of them starts at most {@value #STARTS_PER_BLOCKED_TASK}.
 *
 * <p><b>Limits.</b> {@code execute} rejects ({@link RejectedExecutionException}) once {@code maxThreads}
 * threads are busy and {@code maxThreads} tasks wait, and after {@link #shutdown()} (tasks queued before
 * it still get threads as above). A task that throws is
 * reported to its thread's uncaught-exception handler and the thread goes on. Threads are daemons named
 * {@code namePrefix} and a count from 1 and end after {@code keepAlive} idle. {@link #shutdown()} lets the
 * queued tasks run; {@link #shutdownNow()} returns them and interrupts the running ones. Thread-safe.
 */
public final class ElasticPool extends AbstractExecutorService {
  private static final int RUNNING = 0;
  private static final int SHUTDOWN = 1;
  private static final int STOP = 2;

  /** How many waiting tasks one look may start threads for: starting threads is not the timer's job. */
  private static final int MAX_STARTS_PER_LOOK = 64;

  /**
   * How many times {@code patience} a task runs before its thread counts as blocked whatever it does: a
   * task that computes that long is rare, and on a machine whose cores are all busy a thread ready to run
   * may wait several milliseconds for one.
   */
  static final int RUNNING_PATIENCE_FACTOR = 16;

  /**
   * How many threads one blocked thread's task may start for the tasks waiting behind it: enough that a
   * workload that blocks multiplies its threads at every look, few enough that a thread that stays
   * blocked in front of tasks that only wait for cores cannot grow the pool without end.
   */
  static final int STARTS_PER_BLOCKED_TASK = 4;

  private final String namePrefix;
  private final int base;
  private final int maxThreads;
  private final long patienceNanos;
  private final long runningPatienceNanos;
  private final long osReadNanos; // how long one read of a thread's state in the OS stands
  private final long keepAliveNanos;
  private final Runnable lookTask = this::look;

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition terminatedCondition = lock.newCondition();
  // all below under lock
  private final TaskRing queue = new TaskRing(); // the waiting tasks, oldest first
  private final ArrayDeque<Worker> idle = new ArrayDeque<>(); // top: the most recently idle
  private final Set<Worker> workers = new HashSet<>();
  // threads running a task, linked in the order their tasks started: the oldest and the newest
  private Worker busyHead;
  private Worker busyTail;
  private int waking; // threads started or woken that have not yet looked at the queue
  private int names;
  private boolean lookArmed;
  private int looks; // looks armed, ever (for tests)
  private int runState = RUNNING;

  private final class Worker implements Runnable {
    Thread thread;
    boolean isIdle; // in the idle stack; cleared by whoever takes it out (under the lock)
    boolean signalled; // taken out for the queue and counted as waking (under the lock)
    boolean fresh; // made, not started: read and cleared by the launcher only
    // made for the queue and counted as waking, not yet at the queue (under the lock)
    boolean starting;
    // under the lock: in the busy list while running a task
    boolean busy;
    long startedAt;
    long tasks; // tasks begun
    OsThreadState os; // the thread's state in the OS (null: no view)
    long waitedTask; // under the lock: the task in which the thread was last seen waiting
    // under the lock: when the OS last said the thread did not wait, and in which task
    long osReadAt;
    long osReadTask;
    // under the lock: threads started for the tasks waiting behind this one's task, and which task
    int starts;
    long startsTask;
    Worker busyPrev;
    Worker busyNext;

    @Override
    public void run() {
      try {
        // read by others only while this worker is busy, under the lock that next() takes first
        os = OsThreadState.ofCurrentThread();
        Runnable task;
        while ((task = next(this)) != null) {
          try {
            task.run();
          } catch (Throwable t) {
            report(t);
          }
          Thread.interrupted(); // a task's interrupt is not the next task's (nor the idle wait's)
        }
      } finally {
        ended(this); // normally a no-op: next() already removed it
      }
    }

    private void report(Throwable t) {
      Thread me = Thread.currentThread();
      try {
        me.getUncaughtExceptionHandler().uncaughtException(me, t);
      } catch (Throwable ignored) {
        // the handler failed too: nowhere left to report it, and the thread must go on
      }
    }
  }

  /**
   * @param namePrefix the threads' names before their count
   * @param base threads started without waiting (at least 1)
   * @param maxThreads the most threads (at least {@code base}); also the most tasks waiting
   * @param patience how long a task waits behind a blocked thread before a thread starts for it, and how
   *     long a thread runs a task before it can count as blocked rather than working (see the class
   *     comment)
   * @param keepAlive how long a thread stays idle before it ends
   */
  public ElasticPool(
      String namePrefix, int base, int maxThreads, long patience, long keepAlive, TimeUnit unit) {
    this.namePrefix = requireNonNull(namePrefix, "namePrefix");
    if (base < 1 || maxThreads < base || patience < 0 || keepAlive <= 0) {
      throw new IllegalArgumentException(
          "base " + base + ", maxThreads " + maxThreads + ", patience " + patience);
    }
    this.base = base;
    this.maxThreads = maxThreads;
    this.patienceNanos = unit.toNanos(patience);
    this.runningPatienceNanos = saturatedMultiply(patienceNanos, RUNNING_PATIENCE_FACTOR);
    this.osReadNanos = patienceNanos / 2;
    this.keepAliveNanos = unit.toNanos(keepAlive);
  }

  @Override
  public void execute(Runnable task) {
    requireNonNull(task, "task");
    long now = System.nanoTime();
    Worker[] go = null;
    lock.lock();
    try {
      if (runState != RUNNING) {
        throw new RejectedExecutionException("the pool is shut down");
      }
      if (workers.size() - idle.size() >= maxThreads && queue.size() - waking >= maxThreads) {
        throw new RejectedExecutionException(
            maxThreads + " threads are busy and " + (queue.size() - waking) + " tasks wait");
      }
      queue.add(task, now);
      if (queue.size() > waking) {
        if (waking + working(now, base - waking) < base) {
          go = supply(1); // fewer than base threads working: one more, at once
        } else {
          armLook(now); // tasks that wait behind blocked threads get threads from the look
        }
      }
    } finally {
      lock.unlock();
    }
    if (go != null && launch(go) == 0) {
      rejectIfStranded(task);
    }
  }

  /**
   * Under the lock: how many threads are working (see the class comment); counts no further than {@code
   * limit}.
   */
  private int working(long now, int limit) {
    int n = 0;
    // newest task first: once one has run runningPatience, all older ones have too
    for (Worker w = busyTail;
        w != null && n < limit && now - w.startedAt < runningPatienceNanos;
        w = w.busyPrev) {
      if (!blocked(w, now)) {
        n++;
      }
    }
    return n;
  }

  /**
   * Under the lock: threads to start for waiting tasks on blocked threads' account, to {@code limit}:
   * one for each blocked thread whose task has started fewer than {@value #STARTS_PER_BLOCKED_TASK}
   * (counted as started).
   */
  private int startsForBlocked(long now, int limit) {
    int n = 0;
    // oldest task first: the likeliest to be blocked, and the quickest to tell
    for (Worker w = busyHead; w != null && n < limit; w = w.busyNext) {
      if (w.startsTask != w.tasks) {
        w.startsTask = w.tasks;
        w.starts = 0;
      }
      if (w.starts < STARTS_PER_BLOCKED_TASK && blocked(w, now)) {
        w.starts++;
        n++;
      }
    }
    return n;
  }

  /**
   * Under the lock: how long until a busy thread that is working now could count as blocked (its task
   * reaches {@code patience}); {@code patience} when every busy task already has.
   */
  private long untilNextCouldBlock(long now) {
    for (Worker w = busyHead; w != null; w = w.busyNext) {
      long left = w.startedAt + patienceNanos - now;
      if (left > 0) {
        return left; // the oldest task under patience: the first to reach it
      }
    }
    return patienceNanos;
  }

  /** Under the lock: whether busy {@code w} is blocked rather than working (see the class comment). */
  private boolean blocked(Worker w, long now) {
    long ran = now - w.startedAt;
    if (ran < patienceNanos) {
      return false;
    }
    if (ran >= runningPatienceNanos || w.waitedTask == w.tasks) {
      return true; // seen waiting in this task: blocked for the rest of it, without another look
    }
    if (lock.hasQueuedThread(w.thread)) {
      return false;
    }
    // a RUNNABLE thread: computing or waiting for a core (working), or in native I/O (blocked)
    if (w.thread.getState() == Thread.State.RUNNABLE && w.os != null) {
      if (w.osReadTask == w.tasks && now - w.osReadAt < osReadNanos) {
        return false; // the OS said it did not wait a moment ago
      }
      if (!w.os.waitsInTheKernel()) {
        w.osReadAt = now;
        w.osReadTask = w.tasks;
        return false;
      }
    }
    w.waitedTask = w.tasks;
    return true;
  }

  private static long saturatedMultiply(long a, int b) {
    long r = a * b;
    return a != 0 && r / b != a ? Long.MAX_VALUE : r;
  }

  /**
   * Under the lock: how many waiting tasks have waited {@code patience} with no thread coming (the first
   * {@code waking} waiting tasks are the ones the threads on their way will take).
   */
  private int overdue(long now) {
    int skip = waking;
    int n = 0;
    for (int i = 0;
        i < queue.size() && n < MAX_STARTS_PER_LOOK && now - queue.queuedAt(i) >= patienceNanos;
        i++) {
      if (skip > 0) {
        skip--;
      } else {
        n++;
      }
    }
    return n;
  }

  /**
   * Under the lock: {@code n} threads for waiting tasks, counted as waking: idle ones (the most recently
   * idle first), then new ones (made, not started); null for none. {@link #launch} sets them going.
   */
  private Worker[] supply(int n) {
    n = Math.min(n, idle.size() + maxThreads - workers.size());
    if (n <= 0) {
      return null;
    }
    Worker[] ws = new Worker[n];
    for (int i = 0; i < n; i++) {
      Worker w = idle.poll();
      if (w != null) {
        w.isIdle = false;
        w.signalled = true;
      } else {
        w = new Worker();
        w.fresh = true;
        w.starting = true;
        w.thread = new Thread(w, namePrefix + ++names);
        w.thread.setDaemon(true);
        workers.add(w);
      }
      waking++;
      ws[i] = w;
    }
    return ws;
  }

  /** Wakes or starts what {@link #supply} gave; returns how many run (a thread may fail to start). */
  private int launch(Worker[] ws) {
    int running = 0;
    for (Worker w : ws) {
      if (!w.fresh) {
        LockSupport.unpark(w.thread);
        running++;
        continue;
      }
      w.fresh = false;
      try {
        w.thread.start();
        running++;
      } catch (Throwable e) { // OutOfMemoryError: unable to create native thread, most likely
        lock.lock();
        try {
          workers.remove(w);
          waking--;
          armLook(System.nanoTime()); // try again later for the task it was for
          tryTerminate();
        } finally {
          lock.unlock();
        }
      }
    }
    return running;
  }

  /** Under the lock: a look at the waiting tasks when the oldest will have waited {@code patience}. */
  private void armLook(long now) {
    armLook(now, 0);
  }

  /**
   * Under the lock: as {@link #armLook(long)}, at least {@code minDelay} from now (and never sooner than
   * a quarter {@code patience}).
   */
  private void armLook(long now, long minDelay) {
    if (!lookArmed && queue.size() > waking && (!idle.isEmpty() || workers.size() < maxThreads)) {
      lookArmed = true;
      looks++;
      long delay = Math.max(queue.queuedAt(0) + patienceNanos - now, minDelay);
      Timers.schedule(lookTask, Math.max(delay, patienceNanos / 4));
    }
  }

  /** On the timer thread, when the oldest waiting task has waited about {@code patience}. */
  private void look() {
    Worker[] go = null;
    lock.lock();
    try {
      lookArmed = false;
      if (runState < STOP && queue.size() > waking) {
        long now = System.nanoTime();
        int due = overdue(now);
        int n =
            Math.max(
                Math.min(queue.size() - waking, base - waking - working(now, base)),
                due > 0 ? startsForBlocked(now, due) : 0);
        go = supply(n);
        // after a look that starts nothing, the next when a working thread could count as blocked,
        // or a patience later (tasks that wait only for busy cores are not looked at constantly)
        armLook(now, go == null ? untilNextCouldBlock(now) : patienceNanos / 4);
      }
    } finally {
      lock.unlock();
    }
    if (go != null) {
      launch(go);
    }
  }

  /** After no thread could start: rejects {@code task} if no thread is left to run it. */
  private void rejectIfStranded(Runnable task) {
    lock.lock();
    try {
      if (!workers.isEmpty()) {
        return;
      }
      // no thread at all: nothing queued would run, so take this task back and refuse it
      queue.remove(task);
    } finally {
      lock.unlock();
    }
    throw new RejectedExecutionException("could not start a thread");
  }

  /** A worker's next task, after waiting for one; null when the worker is to end. */
  private Runnable next(Worker w) {
    lock.lock();
    try {
      if (w.starting) {
        w.starting = false;
        waking--;
      }
      if (w.busy) {
        unlinkBusy(w);
      }
      while (true) {
        if (runState >= STOP) {
          return exit(w);
        }
        Runnable task = queue.poll();
        if (task != null) {
          linkBusy(w);
          return task;
        }
        if (runState == SHUTDOWN) {
          return exit(w);
        }
        idle.push(w);
        w.isIdle = true;
        long until = System.nanoTime() + keepAliveNanos;
        boolean timedOut = false;
        while (w.isIdle) {
          long left = until - System.nanoTime();
          if (left <= 0) {
            idle.removeLastOccurrence(w); // the longest idle are at the bottom
            w.isIdle = false;
            timedOut = true;
            break;
          }
          lock.unlock();
          LockSupport.parkNanos(this, left);
          Thread.interrupted(); // only shutdownNow interrupts, and it also takes the worker out
          lock.lock();
        }
        if (w.signalled) {
          w.signalled = false;
          waking--;
        } else if (timedOut && queue.isEmpty()) {
          return exit(w);
        }
        // else woken by shutdown, or timed out as a task came: look at the queue again
      }
    } finally {
      lock.unlock();
    }
  }

  /** Under the lock: {@code w} starts a task now. */
  private void linkBusy(Worker w) {
    w.busy = true;
    w.tasks++;
    w.startedAt = System.nanoTime();
    w.busyPrev = busyTail;
    w.busyNext = null;
    if (busyTail != null) {
      busyTail.busyNext = w;
    } else {
      busyHead = w;
    }
    busyTail = w;
  }

  /** Under the lock: {@code w}'s task is over. */
  private void unlinkBusy(Worker w) {
    w.busy = false;
    if (w.busyPrev != null) {
      w.busyPrev.busyNext = w.busyNext;
    } else {
      busyHead = w.busyNext;
    }
    if (w.busyNext == null) {
      busyTail = w.busyPrev;
    } else {
      w.busyNext.busyPrev = w.busyPrev;
    }
    w.busyPrev = w.busyNext = null;
  }

  /**
   * A worker's thread ends: removes it if {@link #next} did not (an error thrown outside a task, such as
   * a failing uncaught-exception handler's {@code StackOverflowError}).
   */
  private void ended(Worker w) {
    lock.lock();
    try {
      if (!workers.contains(w)) {
        return;
      }
      if (w.starting) {
        w.starting = false;
        waking--;
      }
      if (w.busy) {
        unlinkBusy(w);
      }
      if (w.isIdle) {
        idle.remove(w);
        w.isIdle = false;
      }
      if (w.signalled) {
        w.signalled = false;
        waking--;
      }
      workers.remove(w);
      if (queue.size() > waking) {
        armLook(System.nanoTime());
      }
      tryTerminate();
    } finally {
      lock.unlock();
    }
  }

  /** Under the lock: removes a worker that ends. */
  private Runnable exit(Worker w) {
    workers.remove(w);
    tryTerminate();
    return null;
  }

  /** Under the lock. */
  private void tryTerminate() {
    if (terminated()) {
      terminatedCondition.signalAll();
    }
  }

  /** Under the lock: shut down, no thread left and no task waiting ({@link #shutdownNow} drops them). */
  private boolean terminated() {
    return runState != RUNNING && workers.isEmpty() && queue.isEmpty();
  }

  @Override
  public void shutdown() {
    lock.lock();
    try {
      if (runState == RUNNING) {
        runState = SHUTDOWN;
      }
      wakeAllIdle();
      tryTerminate();
    } finally {
      lock.unlock();
    }
  }

  @Override
  public List<Runnable> shutdownNow() {
    List<Runnable> left = new ArrayList<>();
    lock.lock();
    try {
      runState = STOP;
      left.addAll(queue.drain());
      wakeAllIdle();
      for (Worker w : workers) {
        w.thread.interrupt();
      }
      tryTerminate();
    } finally {
      lock.unlock();
    }
    return left;
  }

  /** Under the lock. */
  private void wakeAllIdle() {
    for (Worker w : idle) {
      w.isIdle = false;
      LockSupport.unpark(w.thread);
    }
    idle.clear();
  }

  @Override
  public boolean isShutdown() {
    lock.lock();
    try {
      return runState != RUNNING;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public boolean isTerminated() {
    lock.lock();
    try {
      return terminated();
    } finally {
      lock.unlock();
    }
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    long left = unit.toNanos(timeout);
    lock.lock();
    try {
      while (!terminated()) {
        if (left <= 0) {
          return false;
        }
        left = terminatedCondition.awaitNanos(left);
      }
      return true;
    } finally {
      lock.unlock();
    }
  }

  /** How many one-shot looks at the waiting tasks were ever armed on the timer (for tests). */
  int looks() {
    lock.lock();
    try {
      return looks;
    } finally {
      lock.unlock();
    }
  }

  /** Idle threads now (for tests). */
  int idleThreads() {
    lock.lock();
    try {
      return idle.size();
    } finally {
      lock.unlock();
    }
  }

  /** Threads now (for tests). */
  int threads() {
    lock.lock();
    try {
      return workers.size();
    } finally {
      lock.unlock();
    }
  }

  @Override
  public String toString() {
    lock.lock();
    try {
      return "ElasticPool["
          + namePrefix
          + ", threads "
          + workers.size()
          + ", idle "
          + idle.size()
          + ", waiting "
          + queue.size()
          + "]";
    } finally {
      lock.unlock();
    }
  }
}
