package io.yarpc.peer;

import static java.util.Objects.requireNonNull;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Base class for the peers a transport owns: the identifier, retain counts per {@link PeerSubscriber},
 * and telling subscribers about status changes. Transports keep their peers in a {@link PeerRegistry}.
 * Thread-safe.
 */
public abstract class AbstractPeer implements Peer {
  private final String identifier;
  private final Map<PeerSubscriber, int[]> subscribers =
      new IdentityHashMap<>(); // guarded by itself

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
   * Closes the peer once its last subscriber released it (or its transport stops). Gracefully: calls in
   * flight on the peer's connections finish with their answers (or at their deadlines) before those
   * connections close; a call sent through the peer afterwards ends too, either refused with {@code
   * unavailable} and marked unprocessed, or carried on a connection closed when it ends. Only the
   * transport's stop may cut calls short. Does not block. {@code PeerReleaseSuite} in yarpc-testing checks
   * a transport against this.
   */
  protected abstract void close();

  @Override
  public String toString() {
    return getClass().getSimpleName() + "{" + identifier + ", " + status() + "}";
  }
}
