package io.yarpc.peer.internal;

import io.yarpc.transport.RequestMeta;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code round-robin}: the members in a ring, chosen in turn. A member entering rotation joins just
 * before the cursor, so it is the last of the current turn (as yarpc-go's ring); one leaving keeps the
 * others' order. Adding and removing cost O(members); choosing O(1).
 */
public final class RoundRobinStrategy implements PeerStrategy {
  private final List<Member> ring = new ArrayList<>();
  private int next; // index in ring of the next member to choose

  @Override
  public void add(Member member) {
    ring.add(next, member);
    next = (next + 1) % ring.size();
  }

  @Override
  public void remove(Member member) {
    int index = ring.indexOf(member);
    ring.remove(index);
    if (index < next) {
      next--;
    }
    if (next >= ring.size()) {
      next = 0;
    }
  }

  @Override
  public Member choose(RequestMeta meta) {
    Member m = ring.get(next);
    next = (next + 1) % ring.size();
    return m;
  }

  /** From the cursor: the order of the next choices. */
  @Override
  public List<Member> rotation() {
    List<Member> order = new ArrayList<>(ring.size());
    for (int i = 0; i < ring.size(); i++) {
      order.add(ring.get((next + i) % ring.size()));
    }
    return order;
  }
}
