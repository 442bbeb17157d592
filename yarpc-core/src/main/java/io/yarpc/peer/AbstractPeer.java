package io.yarpc.peer;

import static java.util.Objects.requireNonNull;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Base class for the peers a transport owns: the identifier, retain counts per {@link PeerSubscriber},
 * telling subscribers about status changes, and the one rule for calls through a released peer.
 * Transports keep their peers in a {@link PeerRegistry}. Thread-safe.
 *
 * <p>Release: when the registry releases a peer (its last holder gave it back, or {@link
 * PeerRegistry#closeAll()}), a call through it that has not {@linkplain #beginCall begun} is refused with
 * the {@linkplain #releasedError() released error} ({@code unavailable}, unprocessed: nothing was sent), by
 * {@link PeerCalls#choose} for a lease handed out before the release, or by {@link #beginCall} when the
 * release came after that; a call that began is the peer's to finish ({@link #close()}).
 */
public abstract class AbstractPeer implements Peer {
  // beginCall's gate: the number of calls beginning, plus RELEASED once released, plus CLOSED once
  // close() was called
  private static final long RELEASED = 1L << 62;
  private static final long CLOSED = 1L << 61;

  private final String identifier;
  private final Map<PeerSubscriber, int[]> subscribers =
      new IdentityHashMap<>(); // guarded by itself
  private final AtomicLong gate = new AtomicLong();

  /** A peer for {@code identifier} (usually {@code host:port}). */
  protected AbstractPeer(String identifier) {
    this.identifier = requireNonNull(identifier, "identifier");
  }

  @Override
  public final String identifier() {
    return identifier;
  }

  /** Counts a retain by {@code subscriber}; returns whether it is the peer's first. */
  final boolean retain(PeerSubscriber subscriber) {
    requireNonNull(subscriber, "subscriber");
    synchronized (subscribers) {
      boolean first = subscribers.isEmpty();
      subscribers.computeIfAbsent(subscriber, s -> new int[1])[0]++;
      return first;
    }
  }

  /**
   * Counts a release by {@code subscriber}; returns whether no retain is left.
   *
   * @throws IllegalArgumentException when {@code subscriber} holds no retain of this peer
   */
  final boolean release(PeerSubscriber subscriber) {
    synchronized (subscribers) {
      int[] count = subscribers.get(subscriber);
      if (count == null) {
        throw new IllegalArgumentException(
            "peer " + identifier + " is not retained by " + subscriber);
      }
      if (--count[0] == 0) {
        subscribers.remove(subscriber);
      }
      return subscribers.isEmpty();
    }
  }

  /** Whether any subscriber retains this peer. */
  protected final boolean isRetained() {
    synchronized (subscribers) {
      return !subscribers.isEmpty();
    }
  }

  /**
   * Tells every subscriber that {@link #status()} changed. Call it without holding locks of your own;
   * a subscriber's failure does not keep the others uninformed.
   */
  protected final void notifySubscribers() {
    List<PeerSubscriber> toTell;
    synchronized (subscribers) {
      toTell = new ArrayList<>(subscribers.keySet());
    }
    for (PeerSubscriber s : toTell) {
      try {
        s.onStatusChanged(this);
      } catch (RuntimeException ignored) {
        // one subscriber's failure must not keep the others uninformed
      }
    }
  }

  /**
   * Runs {@code begin}, the step that makes a call the peer's own work (the call is then in flight and
   * {@link #close()} finishes it: e.g. a stream opened on a channel, a request registered on a
   * connection), unless the peer was released: then {@code begin} does not run and the {@linkplain
   * #releasedError() released error} is thrown (the caller still owns the request). Never concurrently
   * with the release: {@link #close()} is called only once every {@code begin} that started before the
   * release has returned (on the thread of the last of them, or the registry's when none was running).
   * {@code begin} must be quick and must not block.
   *
   * @throws YarpcException the released error, when the peer was released
   */
  protected final <T> T beginCall(Supplier<T> begin) {
    if ((gate.incrementAndGet() & RELEASED) != 0) {
      leave();
      throw releasedError();
    }
    try {
      return begin.get();
    } finally {
      leave();
    }
  }

  private void leave() {
    if (gate.decrementAndGet() == RELEASED) {
      closeOnce();
    }
  }

  /**
   * The error of a call through this peer after it was released: {@code unavailable}, {@linkplain
   * YarpcException#unprocessed() unprocessed} (nothing was sent, so a retry may send it elsewhere), "peer
   * ID was released". For a transport that learns of the release on its own, e.g. a closed peer asked to
   * connect.
   */
  protected final YarpcException releasedError() {
    return YarpcException.of(Code.UNAVAILABLE, "peer %s was released", identifier)
        .withUnprocessed();
  }

  /** Whether the registry released the peer (calls through it are refused). */
  final boolean isReleased() {
    return (gate.get() & RELEASED) != 0;
  }

  /**
   * For the registry: marks the peer released, so no call begins on it any more, then closes it once no
   * call is beginning. Once.
   */
  final void releaseAndClose() {
    if ((gate.getAndUpdate(g -> g | RELEASED) & RELEASED) == 0) {
      closeOnce();
    }
  }

  private void closeOnce() {
    if (gate.compareAndSet(RELEASED, RELEASED | CLOSED)) {
      close();
    }
  }

  /**
   * Closes the peer once its last subscriber released it (or its transport stops). Gracefully: calls in
   * flight on the peer's connections (those that {@linkplain #beginCall began}) finish with their answers
   * (or at their deadlines) before those connections close; a call through the peer afterwards is refused
   * with the {@linkplain #releasedError() released error} (the registry's release, {@link PeerCalls} and
   * {@link #beginCall} see to it). Only the transport's stop may cut calls short. Does not block. Called by
   * the {@link PeerRegistry} at most once (a transport's stop may call it too). {@code PeerReleaseSuite}
   * in yarpc-testing checks a transport against this.
   */
  protected abstract void close();

  @Override
  public String toString() {
    return getClass().getSimpleName() + "{" + identifier + ", " + status() + "}";
  }
}
