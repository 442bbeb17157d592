package io.yarpc.peer.internal;

import io.yarpc.peer.PeerChooser;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The calls whose peer choice is still waiting, so that the call path can say why when the deadline
 * passes first ({@code ... while waiting for a peer: peer 127.0.0.1:8080 is unreachable: Connection
 * refused}) instead of a bare timeout. Keyed by the transport's call future (by identity); {@link
 * io.yarpc.peer.PeerCalls} registers a call when its choice does not complete at once and removes it
 * when the choice ends. Thread-safe.
 */
public final class PendingChoices {
  /**
   * How long after a call's deadline a chooser's own wait times out: the call path's deadline error,
   * which says why the call waited, comes first; the chooser's timeout ends waits of calls that have no
   * such timer (streams).
   */
  public static final long WAIT_GRACE_NANOS = 20_000_000;

  private static final Map<CompletableFuture<?>, PeerChooser> WAITING = new ConcurrentHashMap<>();

  private PendingChoices() {}

  /** The call {@code call} waits for {@code chooser}. */
  public static void add(CompletableFuture<?> call, PeerChooser chooser) {
    WAITING.put(call, chooser);
  }

  /** The call's choice ended. */
  public static void remove(CompletableFuture<?> call) {
    WAITING.remove(call);
  }

  /**
   * Why {@code call} is waiting for a peer ({@link PeerChooser#waitReason()}, or a generic text when the
   * chooser does not say); null when it is not waiting.
   */
  public static String reason(CompletableFuture<?> call) {
    PeerChooser chooser = WAITING.get(call);
    if (chooser == null) {
      return null;
    }
    String reason;
    try {
      reason = chooser.waitReason();
    } catch (RuntimeException e) {
      reason = null;
    }
    return reason != null ? reason : "no peer of " + chooser + " became available";
  }
}
