package io.yarpc.observability.observer.internal;

import io.yarpc.transport.Deadline;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.RpcType;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * What {@link ObservingMiddleware} knows about one call (or stream) as it goes: made when the call
 * reaches the middleware, handed to the {@link CallObserver} at each step. The facts set at the start are
 * final; those set at the end ({@link #elapsedNanos()}, {@link #responseBytes()}) are written by the
 * middleware before it calls the observer's end method, on the thread that calls it. Each observer may
 * keep one object of its own here ({@link #attach}) between its begin and end methods.
 */
public final class ObservedCall {
  private static final AtomicIntegerFieldUpdater<ObservedCall> SENT =
      AtomicIntegerFieldUpdater.newUpdater(ObservedCall.class, "messagesSent");
  private static final AtomicIntegerFieldUpdater<ObservedCall> RECEIVED =
      AtomicIntegerFieldUpdater.newUpdater(ObservedCall.class, "messagesReceived");
  private static final AtomicIntegerFieldUpdater<ObservedCall> ENDED =
      AtomicIntegerFieldUpdater.newUpdater(ObservedCall.class, "ended");

  private final String dispatcher;
  private final Direction direction;
  private final RpcType rpcType;
  private final RequestMeta meta;
  private final long startNanos;
  private final long ttlNanos;
  private final long requestBytes;

  final CallObserver[] observers; // those told of this call, fixed when it began
  private CallObserver owner;
  private Object attachment;
  private Object[] moreAttachments; // owner, value, owner, value... for a second observer on
  private long elapsedNanos;
  private long responseBytes = -1;
  private boolean panicked;
  private volatile int messagesSent;
  private volatile int messagesReceived;
  private volatile int ended;

  ObservedCall(
      CallObserver[] observers,
      String dispatcher,
      Direction direction,
      RpcType rpcType,
      RequestMeta meta,
      long startNanos,
      long requestBytes) {
    this.observers = observers;
    this.dispatcher = dispatcher;
    this.direction = direction;
    this.rpcType = rpcType;
    this.meta = meta;
    this.startNanos = startNanos;
    Deadline deadline = meta.deadline();
    this.ttlNanos = deadline == null ? -1 : Math.max(0, deadline.remainingNanos());
    this.requestBytes = requestBytes;
  }

  /** The name of the dispatcher whose middleware saw the call. */
  public String dispatcher() {
    return dispatcher;
  }

  /** Inbound or outbound. */
  public Direction direction() {
    return direction;
  }

  /** Unary, oneway or streaming. */
  public RpcType rpcType() {
    return rpcType;
  }

  /** The call's metadata as the middleware received it. */
  public RequestMeta meta() {
    return meta;
  }

  /** {@link System#nanoTime()} when the call reached the middleware. */
  public long startNanos() {
    return startNanos;
  }

  /** Whether the call had a deadline when it reached the middleware. */
  public boolean hasDeadline() {
    return ttlNanos >= 0;
  }

  /** The time the call had left when it reached the middleware (its TTL), or -1 without a deadline. */
  public long ttlNanos() {
    return ttlNanos;
  }

  /** The request body's length, or -1 when unknown (and for streams). */
  public long requestBytes() {
    return requestBytes;
  }

  /** The response body's length, or -1 when there was none or its length was unknown. */
  public long responseBytes() {
    return responseBytes;
  }

  /** The call's duration, set when it ends. */
  public long elapsedNanos() {
    return elapsedNanos;
  }

  /**
   * Whether the handler or outbound threw instead of returning a future: the nearest thing to a Go panic
   * going through yarpc-go's middleware (its {@code panics} counter).
   */
  public boolean panicked() {
    return panicked;
  }

  /** Messages sent on the stream so far (successful sends). */
  public int messagesSent() {
    return messagesSent;
  }

  /** Messages received on the stream so far (not counting the end of the stream). */
  public int messagesReceived() {
    return messagesReceived;
  }

  /** {@code owner}'s own object for this call, or null. */
  public Object attachment(CallObserver owner) {
    if (this.owner == owner) {
      return attachment;
    }
    Object[] more = moreAttachments;
    if (more != null) {
      for (int i = 0; i < more.length; i += 2) {
        if (more[i] == owner) {
          return more[i + 1];
        }
      }
    }
    return null;
  }

  /**
   * Keeps {@code owner}'s own object for this call; call it from {@link CallObserver#begin}, whose
   * thread hands the call on to the later methods.
   */
  public void attach(CallObserver owner, Object attachment) {
    if (this.owner == null || this.owner == owner) {
      this.owner = owner;
      this.attachment = attachment;
      return;
    }
    Object[] more = moreAttachments;
    if (more != null) {
      for (int i = 0; i < more.length; i += 2) {
        if (more[i] == owner) {
          more[i + 1] = attachment;
          return;
        }
      }
    }
    int n = more == null ? 0 : more.length;
    Object[] grown = more == null ? new Object[2] : Arrays.copyOf(more, n + 2);
    grown[n] = owner;
    grown[n + 1] = attachment;
    moreAttachments = grown;
  }

  void markPanicked() {
    panicked = true;
  }

  void finish(long endNanos, long responseBytes) {
    this.elapsedNanos = endNanos - startNanos;
    this.responseBytes = responseBytes;
  }

  void countSent() {
    SENT.incrementAndGet(this);
  }

  void countReceived() {
    RECEIVED.incrementAndGet(this);
  }

  /** True the first time only: a stream ends once, however many ways it is told to. */
  boolean tryEnd() {
    return ENDED.compareAndSet(this, 0, 1);
  }
}
