package io.yarpc.peer.internal;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The members in rotation in an array with O(1) add and remove (the last member takes a removed one's
 * place; {@link Member#slot} is each member's index): the base of the strategies that pick by index.
 */
abstract class MemberArray implements PeerStrategy {
  private Member[] members = new Member[8];
  private int size;

  @Override
  public final void add(Member member) {
    if (size == members.length) {
      members = Arrays.copyOf(members, size * 2);
    }
    member.slot = size;
    members[size++] = member;
  }

  @Override
  public final void remove(Member member) {
    int index = member.slot;
    Member last = members[--size];
    members[index] = last;
    last.slot = index;
    members[size] = null;
    member.slot = -1;
  }

  /** How many members are in rotation. */
  final int size() {
    return size;
  }

  /** The member at {@code index}, from 0 to {@link #size()} exclusive. */
  final Member get(int index) {
    return members[index];
  }

  /** In the array's order. */
  @Override
  public List<Member> rotation() {
    List<Member> order = new ArrayList<>(size);
    for (int i = 0; i < size; i++) {
      order.add(members[i]);
    }
    return order;
  }
}
