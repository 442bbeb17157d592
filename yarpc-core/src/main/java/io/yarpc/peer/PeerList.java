package io.yarpc.peer;

import java.util.List;

/**
 * A set of peer identifiers kept current by an updater (a static list, DNS, service discovery). Updaters
 * only feed lists; the list decides which peers to retain from its {@link PeerTransport} and, when it is
 * also a {@link PeerChooser}, which peer each call gets.
 *
 * <p>The contract: {@link #update} MUST be thread-safe and MAY be called at any time; a list MUST retain a
 * peer from its transport at most once per identifier and release every peer it retained when it stops or
 * the identifier is removed. When it is a {@link PeerChooser}, a choice MUST complete (with a lease, or
 * with {@code unavailable} / {@code deadline-exceeded} when no peer becomes available in time), every
 * lease MUST be finished exactly once by the outbound, and a choice whose future the caller cancels MUST
 * NOT leave a lease behind.
 */
public interface PeerList {
  /**
   * Removes {@code removals}, then adds {@code additions}. Adding an identifier that is already in the list
   * or removing one that is not is an error, reported with an {@link IllegalArgumentException} that names
   * the offending identifiers; every other identifier of the update is still applied. May be called from
   * any thread, before, while or after the list runs.
   *
   * @param additions identifiers to add, e.g. {@code host:port}; not null, may be empty
   * @param removals identifiers to remove; not null, may be empty
   */
  void update(List<String> additions, List<String> removals);
}
