package io.yarpc.peer.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The consistent hash ring: yarpc-go's choices, stability, minimal movement, spread and offsets. */
class HashRing32Test {
  private static List<TestMember> members(int n) {
    List<TestMember> members = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      members.add(new TestMember("10.0.0." + i + ":8080"));
    }
    return members;
  }

  private static HashRing32 ring(List<? extends Member> members) {
    HashRing32 ring = new HashRing32(100, "");
    members.forEach(ring::add);
    return ring;
  }

  private static Map<String, String> owners(HashRing32 ring, int keys) {
    Map<String, String> owners = new LinkedHashMap<>();
    for (int k = 0; k < keys; k++) {
      owners.put("key-" + k, ring.choose("key-" + k, 0).identifier());
    }
    return owners;
  }

  @Test
  void choosesAsYarpcGosHashring32() {
    // yarpc-go peer/hashring32/list_test.go, TestAddRemoveAndChoose: 5 replicas, delimiter "#"
    HashRing32 ring = new HashRing32(5, "#");
    TestMember one = new TestMember("shard-1");
    TestMember two = new TestMember("shard-2");
    ring.add(one);
    ring.add(two);
    assertThat(ring.choose("foo1", 0)).isSameAs(one);
    assertThat(ring.choose("foo2", 0)).isSameAs(two);

    ring.remove(two);
    assertThat(ring.choose("foo1", 0)).isSameAs(one);
    assertThat(ring.choose("foo2", 0)).isSameAs(one);
  }

  @Test
  void placesEachMemberAtItsReplicasAndDependsOnMembersNotOnOrder() {
    List<TestMember> members = members(5);
    HashRing32 forward = ring(members);
    List<TestMember> reversed = new ArrayList<>(members);
    java.util.Collections.reverse(reversed);
    HashRing32 backward = ring(reversed);

    assertThat(forward.points()).isEqualTo(500);
    assertThat(forward.members()).isEqualTo(5);
    assertThat(owners(forward, 2_000)).isEqualTo(owners(backward, 2_000));
  }

  @Test
  void spreadsKeysOverEveryMember() {
    HashRing32 ring = ring(members(5));
    Map<String, Integer> counts = new HashMap<>();
    owners(ring, 10_000).values().forEach(id -> counts.merge(id, 1, Integer::sum));
    assertThat(counts).hasSize(5);
    // 100 points each: every member gets a fair share (2,000 on average)
    assertThat(counts.values()).allSatisfy(c -> assertThat(c).isBetween(1_000, 3_000));
  }

  @Test
  void removingAMemberMovesOnlyItsKeysAndAddingItBackRestoresThem() {
    List<TestMember> members = members(5);
    HashRing32 ring = ring(members);
    Map<String, String> before = owners(ring, 5_000);
    TestMember gone = members.get(2);

    ring.remove(gone);
    Map<String, String> after = owners(ring, 5_000);
    int moved = 0;
    for (String key : before.keySet()) {
      if (before.get(key).equals(gone.identifier())) {
        assertThat(after.get(key)).isNotEqualTo(gone.identifier());
        moved++;
      } else {
        assertThat(after.get(key)).as("owner of %s", key).isEqualTo(before.get(key));
      }
    }
    assertThat(moved).isPositive();

    ring.add(gone);
    assertThat(owners(ring, 5_000)).isEqualTo(before);
  }

  @Test
  void aNewMemberTakesKeysOnlyForItself() {
    List<TestMember> members = members(6);
    HashRing32 ring = ring(members.subList(0, 5));
    Map<String, String> before = owners(ring, 5_000);
    ring.add(members.get(5));
    Map<String, String> after = owners(ring, 5_000);
    int taken = 0;
    for (String key : before.keySet()) {
      if (!after.get(key).equals(before.get(key))) {
        assertThat(after.get(key)).isEqualTo(members.get(5).identifier());
        taken++;
      }
    }
    // about a sixth of the keys
    assertThat(taken).isBetween(400, 1_400);
  }

  @Test
  void anOffsetWalksToDistinctMembersClockwise() {
    HashRing32 ring = ring(members(4));
    for (int k = 0; k < 200; k++) {
      String key = "key-" + k;
      Set<String> seen = new HashSet<>();
      for (int n = 0; n < 4; n++) {
        seen.add(ring.choose(key, n).identifier());
      }
      assertThat(seen).as("members at offsets 0-3 of %s", key).hasSize(4);
      assertThat(ring.choose(key, 4)).isSameAs(ring.choose(key, 0)); // modulo the members
      assertThat(ring.choose(key, 6)).isSameAs(ring.choose(key, 2));
      assertThat(ring.choose(key, 0)).isSameAs(ring.choose(key, 0));
    }
  }

  @Test
  void aKeyPastTheLastPointWrapsToTheFirst() {
    HashRing32 ring = new HashRing32(1, "");
    TestMember only = new TestMember("a");
    ring.add(only);
    for (int i = 0; i < 100; i++) {
      assertThat(ring.choose("k" + i, 0)).isSameAs(only);
      assertThat(ring.chooseAt(0, i)).isSameAs(only);
    }
  }
}
