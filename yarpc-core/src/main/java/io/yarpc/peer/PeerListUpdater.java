package io.yarpc.peer;

import io.yarpc.transport.Lifecycle;

/**
 * Keeps one {@link PeerList}'s membership current from a source (a file, DNS, a discovery service), as
 * yarpc-go's peer list updaters do. An updater is bound to its list when it is built; {@link
 * BoundPeerChooser} starts and stops the two together. The static case needs no updater: give the
 * identifiers to the list's builder (or to {@link PeerList#update} before it starts), as the {@code
 * peers: [...]} of a configuration file does.
 *
 * <p>The contract every implementation follows:
 *
 * <ul>
 *   <li><b>Diffs.</b> Each change of the source is one {@link PeerList#update} call with the
 *       identifiers added and removed since the membership it applied last; it never adds an identifier
 *       it has added and not removed, never removes one it did not add, and never calls with two empty
 *       lists. Its calls do not overlap.
 *   <li><b>Failures keep the last good membership.</b> A source that cannot be read (a lookup that times
 *       out or fails, a missing or malformed file) changes nothing in the list; the failure shows in
 *       {@link #status()} and is logged once, not at every retry. An updater that never succeeded leaves
 *       the list empty.
 *   <li><b>Lifecycle.</b> {@link #start()} starts following the source; it may wait for a first read
 *       (bounded by the updater's own timeout) so that the list has its peers when start returns, but a
 *       failed first read does not fail the start. Once {@link #stop()} has returned the updater never
 *       calls the list again; it leaves the list as it is (the list releases its peers when it stops
 *       itself). A stopped updater cannot start again.
 *   <li><b>Thread-safe</b>: {@code start}, {@code stop} and {@code status} may be called from any
 *       thread; {@code update} calls come from the updater's own threads.
 * </ul>
 */
public interface PeerListUpdater extends Lifecycle {
  /**
   * What the updater knows now: its source, the membership it applied last, when it last read the source
   * and why the latest read failed. Thread-safe, never blocks; a snapshot the caller may keep.
   */
  UpdaterStatus status();
}
