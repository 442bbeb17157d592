package io.yarpc.encoding.protobuf.internal;

import io.yarpc.transport.Body;
import io.yarpc.transport.MessageStream;
import io.yarpc.transport.StreamMessage;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;

/**
 * The send side that both streaming grpc calls share ({@link StreamClientCall}, {@link StreamServerCall}):
 * encoded messages wait here and go to the YARPC stream one at a time, each once the previous {@link
 * MessageStream#send} completed. That is how the stream's flow control reaches the grpc call: the call is
 * ready while the box is {@linkplain #idleLocked() idle}, and {@link #ready()} follows when sends emptied
 * it. When nothing waits any more, what {@link #drainedLocked()} returns ends the sending (the client's
 * half-close, the server's close).
 *
 * <p>The owning call supplies what differs, in the abstract methods: the stream (none yet, or none any
 * more), the end of sending, whether a taken message is dropped, and what a failed send means.
 *
 * <p>Ownership: a waiting body is this box's until it is handed to {@link MessageStream#send} (then the
 * stream's) or dropped (released here: {@link #dropAll()}, a message taken after the call closed, a
 * send that threw).
 *
 * <p>Thread-safety: the state is guarded by the owner's lock (given at construction); methods named
 * {@code ...Locked} run under it, the others take it themselves and run the hooks other than the {@code
 * ...Locked} ones outside it.
 */
abstract class Outbox {
  private final Object lock;
  private final ArrayDeque<Body> waiting = new ArrayDeque<>(); // guarded by lock
  private boolean sending; // guarded by lock: a send's future is not complete yet

  /** An empty box guarded by {@code lock}. */
  Outbox(Object lock) {
    this.lock = lock;
  }

  /** The stream to send on, or null while nothing may be sent (not open yet, or finished). Locked. */
  abstract MessageStream streamLocked();

  /**
   * Called when the box is empty and no send is pending: what ends the sending now, to run outside the
   * lock (and without {@link #ready()}), or null when it does not end yet. Locked.
   */
  abstract Runnable drainedLocked();

  /** Whether a message just taken from the box is released instead of sent (the call closed meanwhile). */
  abstract boolean dropTaken();

  /** A send failed with {@code error}; the messages still waiting are the owner's to drop. */
  abstract void sendFailed(Throwable error);

  /** Sends emptied the box: the grpc call is ready for more. */
  abstract void ready();

  /** Adds {@code body} to send after those waiting. Locked. */
  final void addLocked(Body body) {
    waiting.add(body);
  }

  /** Whether nothing waits and no send is pending. Locked. */
  final boolean idleLocked() {
    return !sending && waiting.isEmpty();
  }

  /** Empties the box, handing the waiting bodies to the caller, which releases them. Locked. */
  final ArrayDeque<Body> takeAllLocked() {
    ArrayDeque<Body> taken = new ArrayDeque<>(waiting);
    waiting.clear();
    return taken;
  }

  /** Empties the box and releases what waited. */
  final void dropAll() {
    ArrayDeque<Body> dropped;
    synchronized (lock) {
      dropped = takeAllLocked();
    }
    for (Body b : dropped) {
      b.release();
    }
  }

  /**
   * Sends waiting messages one at a time for as long as each send completes at once; then waits for the
   * pending one and goes on when it completes. Once nothing waits, runs what ends the sending, or tells
   * the call it is {@linkplain #ready() ready} when {@code afterSend}.
   */
  final void drain(boolean afterSend) {
    while (true) {
      MessageStream s;
      Body next;
      Runnable last = null;
      synchronized (lock) {
        s = streamLocked();
        if (s == null || sending) {
          return;
        }
        next = waiting.poll();
        if (next == null) {
          last = drainedLocked();
        } else {
          sending = true;
        }
      }
      if (next == null) {
        if (last != null) {
          last.run();
        } else if (afterSend) {
          ready();
        }
        return;
      }
      if (dropTaken()) {
        next.release();
        synchronized (lock) {
          sending = false;
        }
        continue;
      }
      CompletableFuture<Void> sent;
      try {
        sent = s.send(StreamMessage.of(next));
      } catch (RuntimeException e) {
        next.release(); // the stream released it already if it took it (release is idempotent)
        sent = CompletableFuture.failedFuture(e);
      }
      if (sent.isDone() && !sent.isCompletedExceptionally()) {
        synchronized (lock) {
          sending = false;
        }
        afterSend = true;
        continue;
      }
      sent.whenComplete(
          (v, error) -> {
            synchronized (lock) {
              sending = false;
            }
            if (error != null) {
              sendFailed(error);
            } else {
              drain(true);
            }
          });
      return;
    }
  }
}
