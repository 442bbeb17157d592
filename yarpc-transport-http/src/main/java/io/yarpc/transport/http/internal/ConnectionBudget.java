package io.yarpc.transport.http.internal;

import io.netty.util.concurrent.EventExecutor;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.concurrent.RejectedExecutionException;

/**
 * One connection's part of the inbound's {@link PendingBytes}: the bytes its requests hold from their
 * arrival until they are handed to a handler (or dropped), against {@code
 * InboundLimits.maxPendingBytesPerConnection}, and which of its {@link Receiver}s (HTTP/1.1: the
 * connection; h2c: each stream) may go on receiving.
 *
 * <p><b>The rule</b>, checked each time a receiver has taken bytes in: a connection holding nothing may
 * always receive. Otherwise a receiver is paused when the connection holds more than its budget, or the
 * inbound more than its own; except that, on a connection holding no complete request (one waiting for
 * its turn will be handed on without anything more being received), the oldest request still being
 * received may go on past the connection's budget, and past the inbound's when the connection holds the
 * inbound's exemption ({@link PendingBytes}). So one request is always able to finish on every connection, and on one
 * connection of the inbound, whatever the budgets: budgets slow requests down, they never deadlock them
 * (a request that stalls is ended by the read timeout, which gives its bytes back). Paused receivers
 * resume, oldest first, as bytes are given back here or anywhere in the inbound.
 *
 * <p><b>Threads.</b> The connection's event loop, except {@link #release} and {@link #wake}, which may come
 * from anywhere (a body handed on and released off the loop, another connection giving bytes back).
 */
final class ConnectionBudget {
  /** Something that receives requests and can stop and resume doing so. Event loop only. */
  interface Receiver {
    /** Stop receiving more bytes (HTTP/1.1: stop reading; h2c: withhold flow-control credit). */
    void pause();

    /** Receive again. */
    void resume();

    /** Bytes this receiver took in were handed on or dropped (h2c: their credit goes back now). */
    default void released() {}

    /** Whether this receiver is paused by the budget or for another reason of the server's. */
    boolean isPaused();
  }

  private final PendingBytes inbound;
  private final long max;
  private final EventExecutor loop;
  // oldest request first; a deque, not a set: adding and removing the receiver of every request
  // then
  // allocates nothing, and there are few (one per HTTP/1.1 connection, one per h2c stream
  // receiving)
  private final ArrayDeque<Receiver> receiving = new ArrayDeque<>();
  private final LinkedHashSet<Receiver> paused = new LinkedHashSet<>();
  private long held;
  private long complete; // of held: bytes of complete requests waiting to be handed on
  private Receiver exemptReceiver; // the receiver for which this connection holds the exemption
  private boolean closed;

  ConnectionBudget(PendingBytes inbound, long max, EventExecutor loop) {
    this.inbound = inbound;
    this.max = max;
    this.loop = loop;
  }

  /** Bytes this connection holds. */
  long held() {
    return held;
  }

  /** {@code r} has begun receiving a request (its head arrived). */
  void startReceiving(Receiver r) {
    if (!receiving.contains(r)) {
      receiving.addLast(r);
    }
  }

  /** {@code r}'s request is complete: its {@code n} bytes wait to be handed on ({@link #releaseComplete}). */
  void complete(Receiver r, long n) {
    complete += n;
    stopReceiving(r);
  }

  /** {@code r}'s request is dropped, or was complete and is handed on. */
  void stopReceiving(Receiver r) {
    receiving.removeFirstOccurrence(r);
    if (r == exemptReceiver) {
      exemptReceiver = null;
      inbound.endExempt(this);
    }
  }

  /** {@code r} is gone (its stream closed): no longer receiving, no longer paused. */
  void forget(Receiver r) {
    paused.remove(r);
    stopReceiving(r);
  }

  /** {@code r} took in {@code n} more bytes: counted, and {@code r} paused if the rule says so. */
  void add(Receiver r, long n) {
    if (n <= 0) {
      return;
    }
    held += n;
    inbound.add(n);
    pauseIfOver(r);
  }

  /**
   * {@code r} reserves {@code n} bytes ahead of their arrival (a whole-message array) only if they fit this
   * connection's budget and the inbound's rules for reservations now ({@link PendingBytes#tryReserve},
   * one atomic step), counted as by {@link #add} when they do; {@link #filled} as they arrive.
   */
  boolean tryReserve(Receiver r, long n) {
    if (closed || n > max - held || !inbound.tryReserve(n)) {
      return false;
    }
    held += n;
    pauseIfOver(r);
    return true;
  }

  /** {@code n} bytes reserved with {@link #tryReserve} arrived, or will not. */
  void filled(long n) {
    inbound.filled(n);
  }

  private void pauseIfOver(Receiver r) {
    if (!closed && !paused.contains(r) && !mayReceive(r)) {
      paused.add(r);
      r.pause();
      inbound.await(this);
      reconsider(); // the total may have dropped meanwhile, with nobody left to wake us
    }
  }

  /** {@code n} bytes {@code r} took in for a request being received were dropped. */
  void release(Receiver r, long n) {
    release(r, n, false);
  }

  /** {@code n} bytes of a {@linkplain #complete complete} request were handed on or dropped. Any thread. */
  void releaseComplete(Receiver r, long n) {
    release(r, n, true);
  }

  private void release(Receiver r, long n, boolean wasComplete) {
    if (n <= 0) {
      return;
    }
    if (!loop.inEventLoop()) {
      try {
        loop.execute(() -> release(r, n, wasComplete));
      } catch (RejectedExecutionException e) {
        inbound.release(n); // the connection is gone with its loop; keep the inbound's count right
      }
      return;
    }
    held -= n;
    if (wasComplete) {
      complete -= n;
    }
    inbound.release(n);
    if (r != null) {
      r.released();
    }
    reconsider();
  }

  /** The connection is closed: it holds no exemption and waits for nothing any more. */
  void close() {
    closed = true;
    receiving.clear();
    paused.clear();
    exemptReceiver = null;
    inbound.endExempt(this);
    inbound.stopWaiting(this);
  }

  /** Another connection gave bytes back: look again on our own loop. Any thread. */
  void wake() {
    try {
      loop.execute(this::reconsider);
    } catch (RejectedExecutionException e) {
      inbound.stopWaiting(this);
    }
  }

  /** Resumes, oldest first, the paused receivers that may receive again. */
  private void reconsider() {
    if (closed) {
      inbound.stopWaiting(this);
      return;
    }
    if (!paused.isEmpty()) {
      for (Receiver r : new ArrayList<>(paused)) {
        if (mayReceive(r)) {
          paused.remove(r);
          r.resume();
        }
      }
    }
    if (paused.isEmpty()) {
      inbound.stopWaiting(this);
    }
  }

  private boolean mayReceive(Receiver r) {
    if (held <= 0) {
      return true; // holding nothing: may always receive
    }
    boolean oldest = complete <= 0 && receiving.peekFirst() == r;
    if (held > max && !oldest) {
      return false;
    }
    if (inbound.withinBudget()) {
      return true;
    }
    if (oldest && inbound.tryExempt(this)) {
      exemptReceiver = r;
      return true;
    }
    return false;
  }
}
