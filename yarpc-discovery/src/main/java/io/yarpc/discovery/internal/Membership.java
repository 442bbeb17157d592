package io.yarpc.discovery.internal;

import static java.util.Objects.requireNonNull;

import io.yarpc.peer.PeerList;
import io.yarpc.peer.UpdaterStatus;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;

/**
 * What every updater does with the result of reading its source: the membership it applied last, the
 * diff against it as one {@link PeerList#update} call, the status of the latest read, and logs that say
 * each new failure once (not at every retry) and the recovery.
 *
 * <p>Thread-safe. Reads are reported one at a time (a lock serialises them), and {@link #stop()} takes
 * the same lock: an update in progress finishes before {@code stop} returns, and nothing is applied
 * after it. {@link #status} never waits for an update.
 */
public final class Membership {
  private final PeerList list;
  private final String kind;
  private final String source;
  private final Logger log;

  private final Object lock = new Object();
  private boolean running; // guarded by lock
  private volatile State state = new State(List.of(), null, null, 0); // written under lock

  /** What {@link #status} reports, replaced as a whole. */
  private record State(List<String> applied, Instant lastRefresh, String lastError, int failures) {}

  /**
   * Membership fed to {@code list} by an updater of {@code kind} that reads {@code source}, logging to
   * {@code log}.
   */
  public Membership(PeerList list, String kind, String source, Logger log) {
    this.list = requireNonNull(list, "list");
    this.kind = kind;
    this.source = source;
    this.log = log;
  }

  /** From now on, reads are applied. */
  public void start() {
    synchronized (lock) {
      running = true;
    }
  }

  /** From now on nothing is applied; waits for an update in progress. */
  public void stop() {
    synchronized (lock) {
      running = false;
    }
  }

  /**
   * A successful read found {@code peers} (identifiers; duplicates count once): the list gets the
   * difference with what was applied last, in one update, unless there is none.
   */
  public void succeeded(List<String> peers) {
    synchronized (lock) {
      if (!running) {
        return;
      }
      State was = state;
      Set<String> wanted = new LinkedHashSet<>(peers);
      Set<String> had = new HashSet<>(was.applied);
      List<String> removals = new ArrayList<>();
      for (String id : was.applied) {
        if (!wanted.contains(id)) {
          removals.add(id);
        }
      }
      List<String> additions = new ArrayList<>();
      for (String id : wanted) {
        if (!had.contains(id)) {
          additions.add(id);
        }
      }
      if (was.lastError != null) {
        log.info(
            "{} updater for {}: recovered after {} failed read{}; {} peer{}",
            kind,
            source,
            was.failures,
            was.failures == 1 ? "" : "s",
            wanted.size(),
            wanted.size() == 1 ? "" : "s");
      }
      boolean changed = !additions.isEmpty() || !removals.isEmpty();
      state = new State(changed ? List.copyOf(wanted) : was.applied, Instant.now(), null, 0);
      if (!changed) {
        return;
      }
      log.debug("{} updater for {}: adding {}, removing {}", kind, source, additions, removals);
      try {
        list.update(additions, removals);
      } catch (RuntimeException e) {
        // The list applied every other identifier (PeerList's contract): go on from the new
        // membership.
        log.warn("{} updater for {}: the peer list refused part of an update", kind, source, e);
      }
    }
  }

  /**
   * A read failed for {@code reason}: the list keeps its peers. The reason is logged when it differs
   * from the previous one.
   */
  public void failed(String reason) {
    synchronized (lock) {
      if (!running) {
        return;
      }
      State was = state;
      if (!reason.equals(was.lastError)) {
        int kept = was.applied.size();
        log.warn(
            "{} updater for {}: {}; {}",
            kind,
            source,
            reason,
            kept == 0
                ? "no peers yet"
                : "keeping the last " + kept + (kept == 1 ? " peer" : " peers"));
      }
      state = new State(was.applied, was.lastRefresh, reason, was.failures + 1);
    }
  }

  /** How many reads in a row failed, up to the latest. */
  public int consecutiveFailures() {
    return state.failures;
  }

  /** The status to report, with {@code running} as the updater's lifecycle says. */
  public UpdaterStatus status(boolean running) {
    State s = state;
    return new UpdaterStatus(
        kind, source, running, s.applied, s.lastRefresh, s.lastError, s.failures);
  }
}
