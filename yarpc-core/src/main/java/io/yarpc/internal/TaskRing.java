package io.yarpc.internal;

import java.util.ArrayList;
import java.util.List;

/**
 * The waiting tasks of an {@link ElasticPool}, oldest first, each with the time it was queued: two arrays
 * used as one ring, so that queueing a task allocates nothing (a linked node per task was 32 bytes of every
 * call that hops to the handler pool). The ring doubles when full and goes back to its first size when it
 * empties after having grown past {@link #SHRINK_ABOVE}, so a burst does not hold its memory for ever.
 *
 * <p>Not thread-safe: the pool uses it under its lock.
 */
final class TaskRing {
  /** The first capacity: a power of two, as every capacity. */
  static final int INITIAL = 16;

  /** A ring larger than this is given up when it empties. */
  static final int SHRINK_ABOVE = 1024;

  private Runnable[] tasks = new Runnable[INITIAL];
  private long[] queuedAt = new long[INITIAL];
  private int head; // index of the oldest task
  private int size;

  int size() {
    return size;
  }

  boolean isEmpty() {
    return size == 0;
  }

  /** The ring's capacity (tests). */
  int capacity() {
    return tasks.length;
  }

  /** Adds {@code task}, queued at {@code now} ({@link System#nanoTime()}), as the newest. */
  void add(Runnable task, long now) {
    if (size == tasks.length) {
      grow();
    }
    int i = index(size);
    tasks[i] = task;
    queuedAt[i] = now;
    size++;
  }

  /** Removes and returns the oldest task; null when there is none. */
  Runnable poll() {
    if (size == 0) {
      return null;
    }
    Runnable task = tasks[head];
    tasks[head] = null;
    head = index(1);
    size--;
    if (size == 0) {
      emptied();
    }
    return task;
  }

  /** When the {@code i}-th oldest task (0: the oldest) was queued; {@code i} must be below {@link #size}. */
  long queuedAt(int i) {
    if (i < 0 || i >= size) {
      throw new IndexOutOfBoundsException(i);
    }
    return queuedAt[index(i)];
  }

  /** Removes {@code task} (by identity, its oldest occurrence); false when it is not here. Linear. */
  boolean remove(Runnable task) {
    for (int i = 0; i < size; i++) {
      if (tasks[index(i)] == task) {
        for (int j = i; j < size - 1; j++) { // close the gap: the newer ones move up by one
          tasks[index(j)] = tasks[index(j + 1)];
          queuedAt[index(j)] = queuedAt[index(j + 1)];
        }
        tasks[index(size - 1)] = null;
        size--;
        if (size == 0) {
          emptied();
        }
        return true;
      }
    }
    return false;
  }

  /** Removes every task and returns them, oldest first. */
  List<Runnable> drain() {
    List<Runnable> out = new ArrayList<>(size);
    Runnable t;
    while ((t = poll()) != null) {
      out.add(t);
    }
    return out;
  }

  private int index(int offset) {
    return (head + offset) & (tasks.length - 1); // the length is a power of two
  }

  private void grow() {
    int n = tasks.length;
    Runnable[] t = new Runnable[n * 2];
    long[] q = new long[n * 2];
    int first = n - head; // the oldest tasks, up to the array's end
    System.arraycopy(tasks, head, t, 0, first);
    System.arraycopy(tasks, 0, t, first, head);
    System.arraycopy(queuedAt, head, q, 0, first);
    System.arraycopy(queuedAt, 0, q, first, head);
    tasks = t;
    queuedAt = q;
    head = 0;
  }

  private void emptied() {
    head = 0;
    if (tasks.length > SHRINK_ABOVE) {
      tasks = new Runnable[INITIAL];
      queuedAt = new long[INITIAL];
    }
  }

  /** The tasks, oldest first (tests). */
  Runnable[] toArray() {
    Runnable[] out = new Runnable[size];
    for (int i = 0; i < size; i++) {
      out[i] = tasks[index(i)];
    }
    return out;
  }
}
