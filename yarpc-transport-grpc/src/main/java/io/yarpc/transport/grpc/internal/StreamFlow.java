package io.yarpc.transport.grpc.internal;

import static java.util.Objects.requireNonNull;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.StreamMessage;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The flow control both ends of a gRPC stream share ({@link GrpcClientStream}, {@link GrpcServerStream}),
 * as {@link io.yarpc.transport.MessageStream} specifies it, over grpc-java's call:
 *
 * <ul>
 *   <li>Receiving: at most one receive is pending; it asks grpc-java for exactly one message ({@code
 *       request(1)}), unless a receive whose future was abandoned already asked. A message that arrives
 *       when nobody waits for it (that abandoned receive) is kept, unclaimed, for the next receive.
 *   <li>Sending: at most one send is pending; a message goes to grpc-java at once, and its future
 *       completes when the call {@linkplain Wire#isReady() is ready} for the next one — at once, or on
 *       {@link #onReady()}.
 *   <li>Ending: {@link #cancelLocked()} and {@link #closeLocked} mark the flow ended and hand the pending
 *       futures (and the unclaimed messages, when they will never be received) to the owner as {@link
 *       Detached}, to settle outside the lock.
 * </ul>
 *
 * <p>The owning end supplies what differs: the {@link Wire} to its grpc-java call, its send size limit, how
 * a receive ends once nothing more will arrive (end of stream or an error), and why a send is refused; it
 * keeps its own errors and the rest of its state.
 *
 * <p>Ownership: an unclaimed message is this flow's until a receive takes it (then the caller's) or the
 * flow drops it into {@link Detached#orphans()} (then the owner's, which releases it). A sent message is
 * handed to grpc-java, which releases it once written or when the call ends; one that is refused or that
 * grpc-java does not take is released here.
 *
 * <p>Thread-safety: all state is guarded by the owner's lock (given at construction), which also guards
 * every use of the {@link Wire}; the owner calls the {@code Locked} methods under it. Futures handed out
 * are completed outside it.
 */
final class StreamFlow {
  /** The owner's grpc-java call ({@code ClientCall} or {@code ServerCall}), as far as the flow uses it. */
  interface Wire {
    /** Asks grpc-java for {@code count} more messages. */
    void request(int count);

    /** Hands {@code body} to grpc-java, which owns it once this returns. */
    void sendMessage(Body body);

    /** Whether grpc-java takes the next message without buffering. */
    boolean isReady();

    /**
     * A send now waits for the call to become ready ({@code true}), or no longer does ({@code false}:
     * ready again, or the flow ended); called under the lock. The server's end bounds that wait.
     */
    default void sendWaiting(boolean waiting) {}
  }

  /**
   * What an ended flow let go of, for the owner to settle outside the lock: the pending receive and send
   * (either may be null) and the unclaimed messages, which are now the owner's to release.
   */
  record Detached(
      CompletableFuture<StreamMessage> receive, CompletableFuture<Void> send, List<Body> orphans) {
    /** Releases the orphans. */
    void releaseOrphans() {
      for (Body orphan : orphans) {
        orphan.release();
      }
    }

    /** Releases the orphans, then fails the pending receive and send with {@code error}. */
    void fail(YarpcException error) {
      releaseOrphans();
      if (receive != null) {
        receive.completeExceptionally(error);
      }
      if (send != null) {
        send.completeExceptionally(error);
      }
    }
  }

  private final Object lock;
  private final Wire wire;
  private final long maxSendMessageSize;
  private final Supplier<CompletableFuture<StreamMessage>> receiveEnd;
  private final Function<Body, Throwable> sendRefusal;

  private CompletableFuture<StreamMessage> pendingReceive; // guarded by lock
  private CompletableFuture<Void> pendingSend; // guarded by lock
  private final ArrayDeque<Body> unclaimed =
      new ArrayDeque<>(1); // guarded by lock: arrived, not received
  private int requested; // guarded by lock: messages asked of grpc-java and not delivered yet
  private boolean cancelled; // guarded by lock
  private boolean closed; // guarded by lock

  /**
   * A flow over {@code wire}, guarded by {@code lock}.
   *
   * @param receiveEnd called under the lock by a receive that finds nothing unclaimed: the receive's
   *     outcome now (a {@code null} message for the end of the stream, or an error), or {@code null} to
   *     wait for the next message
   * @param sendRefusal called under the lock by a send (before the size check): why {@code body} may not
   *     be sent, or {@code null}
   */
  StreamFlow(
      Object lock,
      Wire wire,
      long maxSendMessageSize,
      Supplier<CompletableFuture<StreamMessage>> receiveEnd,
      Function<Body, Throwable> sendRefusal) {
    this.lock = lock;
    this.wire = wire;
    this.maxSendMessageSize = maxSendMessageSize;
    this.receiveEnd = receiveEnd;
    this.sendRefusal = sendRefusal;
  }

  /** Whether {@link #cancelLocked()} was called; under the lock. */
  boolean cancelledLocked() {
    return cancelled;
  }

  /** Whether {@link #closeLocked} was called; under the lock. */
  boolean closedLocked() {
    return closed;
  }

  /** {@link io.yarpc.transport.MessageStream#receive()}. */
  CompletableFuture<StreamMessage> receive() {
    CompletableFuture<StreamMessage> f;
    synchronized (lock) {
      if (pendingReceive != null && !pendingReceive.isDone()) {
        return CompletableFuture.failedFuture(
            new IllegalStateException("a receive is already pending"));
      }
      pendingReceive = null;
      Body ready = unclaimed.poll();
      if (ready != null) {
        return CompletableFuture.completedFuture(StreamMessage.of(ready));
      }
      CompletableFuture<StreamMessage> end = receiveEnd.get();
      if (end != null) {
        return end;
      }
      f = new CompletableFuture<>();
      pendingReceive = f;
      if (requested == 0) { // a receive whose future was abandoned may have asked already
        requested++;
        wire.request(1);
      }
    }
    return f;
  }

  /** {@link io.yarpc.transport.MessageStream#send}: the message's body is this flow's from now on. */
  CompletableFuture<Void> send(StreamMessage message) {
    requireNonNull(message, "message");
    Body body = message.body();
    boolean handedOver = false;
    try {
      synchronized (lock) {
        if (pendingSend != null && !pendingSend.isDone()) {
          throw new IllegalStateException("a send is already pending: wait for its future first");
        }
        pendingSend = null;
        Throwable refusal = sendRefusal.apply(body);
        if (refusal != null) {
          return CompletableFuture.failedFuture(refusal);
        }
        if (body.length() > maxSendMessageSize) {
          return CompletableFuture.failedFuture(
              YarpcException.of(
                  Code.RESOURCE_EXHAUSTED,
                  "stream message of %d bytes is larger than the maximum send size of %d bytes",
                  body.length(),
                  maxSendMessageSize));
        }
        // From here grpc-java owns the body: it releases it once written, or when the call ends.
        wire.sendMessage(body); // on failure the finally block releases it (release is idempotent)
        handedOver = true;
        if (wire.isReady()) {
          return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> f = new CompletableFuture<>();
        pendingSend = f;
        wire.sendWaiting(true);
        return f;
      }
    } finally {
      if (!handedOver) {
        body.release();
      }
    }
  }

  /**
   * grpc-java delivered a message: it goes to the pending receive, else waits unclaimed for the next one;
   * once the flow ended (or the receive's future is done) it is released.
   */
  void onMessage(Body body) {
    CompletableFuture<StreamMessage> f;
    synchronized (lock) {
      requested = Math.max(0, requested - 1);
      f = pendingReceive;
      pendingReceive = null;
      if (f == null || f.isDone()) {
        if (!cancelled && !closed) {
          unclaimed.add(
              body); // the receive that asked for it was abandoned: keep it for the next one
          return;
        }
        f = null;
      }
    }
    if (f != null && f.complete(StreamMessage.of(body))) {
      return;
    }
    if (f != null) {
      synchronized (lock) {
        if (!cancelled && !closed) {
          // abandoned between taking it and completing it: keep the message first in line, as above
          // (grpc-java delivers messages one at a time, so nothing arrived behind it meanwhile)
          unclaimed.addFirst(body);
          return;
        }
      }
    }
    body.release();
  }

  /** grpc-java reports the call ready: completes the pending send if the call still takes messages. */
  void onReady() {
    CompletableFuture<Void> f = null;
    synchronized (lock) {
      if (pendingSend != null && !closed && !cancelled && wire.isReady()) {
        f = pendingSend;
        pendingSend = null;
        wire.sendWaiting(false);
      }
    }
    if (f != null) {
      f.complete(null);
    }
  }

  /** Takes the pending receive (or null), for the owner to complete at the end of the stream; locked. */
  CompletableFuture<StreamMessage> takeReceiveLocked() {
    CompletableFuture<StreamMessage> f = pendingReceive;
    pendingReceive = null;
    return f;
  }

  /** Marks the flow cancelled; takes the pending futures and the unclaimed messages. Under the lock. */
  Detached cancelLocked() {
    cancelled = true;
    return detach(true);
  }

  /**
   * Marks the flow closed; takes the pending futures, and the unclaimed messages when {@code
   * dropUnclaimed} (else later receives still get them). Under the lock.
   */
  Detached closeLocked(boolean dropUnclaimed) {
    closed = true;
    return detach(dropUnclaimed);
  }

  private Detached detach(boolean dropUnclaimed) {
    CompletableFuture<StreamMessage> receive = pendingReceive;
    CompletableFuture<Void> send = pendingSend;
    pendingReceive = null;
    pendingSend = null;
    if (send != null) {
      wire.sendWaiting(false);
    }
    List<Body> orphans = List.of();
    if (dropUnclaimed) {
      orphans = List.copyOf(unclaimed);
      unclaimed.clear();
    }
    return new Detached(receive, send, orphans);
  }

  /** The error for an operation on a stream that is closed. */
  static YarpcException closedError(RequestMeta meta) {
    return YarpcException.of(
        Code.CANCELLED,
        "stream for procedure \"%s\" of service \"%s\" is closed",
        meta.procedure(),
        meta.service());
  }
}
