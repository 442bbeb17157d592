package io.yarpc.peer.internal;

import io.yarpc.transport.RequestMeta;
import java.util.List;

/**
 * Which member in rotation a call gets: the strategy half of a peer list (yarpc-go's abstractlist
 * {@code Implementation}). The list ({@link io.yarpc.peer.AbstractPeerList}) owns membership,
 * availability, waiting and leases; it {@linkplain #add adds} a member when it enters rotation (its peer
 * became available), {@linkplain #remove removes} it when it leaves, and asks a strategy to {@linkplain
 * #choose choose} only among those.
 *
 * <p>Contract: the list calls {@code add}, {@code remove}, {@code choose} and {@code rotation} only while
 * holding its lock, so a strategy needs no synchronization of its own; it adds only a member not in
 * rotation and removes only one that is; it calls {@code choose} only when at least one member is in
 * rotation, and {@code choose} returns one of them. No method blocks or calls out of the strategy.
 * {@code choose} is on every call's path: it allocates nothing (beyond an occasional scratch-buffer
 * growth).
 */
public interface PeerStrategy {
  /** {@code member} entered rotation. */
  void add(Member member);

  /** {@code member} left rotation. */
  void remove(Member member);

  /** The member for a call; never null (at least one member is in rotation). */
  Member choose(RequestMeta meta);

  /** The members in rotation, in the order the strategy would consider them now; a new list. */
  List<Member> rotation();

  /**
   * Checks what the strategy reads from a call before the call waits or chooses, and throws an
   * {@code invalid-argument} {@link io.yarpc.errors.YarpcException} naming what is wrong. Called without
   * the list's lock: it reads only the call and the strategy's final configuration. The default accepts
   * every call.
   */
  default void validate(RequestMeta meta) {}
}
