package io.yarpc.peer.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Headers;
import io.yarpc.transport.RequestMeta;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Each strategy alone: what it chooses among the members in rotation. */
class StrategiesTest {
  private static final RequestMeta META =
      RequestMeta.builder().service("svc").procedure("p").build();

  private final TestMember a = new TestMember("a:1");
  private final TestMember b = new TestMember("b:2");
  private final TestMember c = new TestMember("c:3");

  private static RequestMeta meta(String shardKey, String... headers) {
    return RequestMeta.builder()
        .service("svc")
        .procedure("p")
        .shardKey(shardKey)
        .headers(Headers.of(headers))
        .build();
  }

  private static Map<String, Integer> counts(PeerStrategy s, int choices) {
    Map<String, Integer> counts = new HashMap<>();
    for (int i = 0; i < choices; i++) {
      counts.merge(s.choose(META).identifier(), 1, Integer::sum);
    }
    return counts;
  }

  private static List<String> sequence(PeerStrategy s, int choices) {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < choices; i++) {
      ids.add(s.choose(META).identifier());
    }
    return ids;
  }

  // --- round-robin

  @Test
  void roundRobinTakesTurnsAndANewcomerIsLastOfTheTurn() {
    RoundRobinStrategy s = new RoundRobinStrategy();
    s.add(a);
    s.add(b);
    s.add(c);
    assertThat(sequence(s, 4)).containsExactly("a:1", "b:2", "c:3", "a:1");
    TestMember d = new TestMember("d:4");
    s.add(d); // just before the cursor (b)
    assertThat(sequence(s, 4)).containsExactly("b:2", "c:3", "a:1", "d:4");
    s.remove(c);
    assertThat(s.rotation()).extracting(Member::identifier).containsExactly("b:2", "a:1", "d:4");
    assertThat(sequence(s, 3)).containsExactly("b:2", "a:1", "d:4");
  }

  // --- random

  @Test
  void randomSpreadsOverEveryMemberAndNeverPicksARemovedOne() {
    RandomStrategy s = new RandomStrategy();
    s.add(a);
    s.add(b);
    s.add(c);
    Map<String, Integer> counts = counts(s, 3_000);
    assertThat(counts).containsOnlyKeys("a:1", "b:2", "c:3");
    assertThat(counts.values()).allSatisfy(n -> assertThat(n).isBetween(700, 1_300));

    s.remove(a); // the first: the last takes its slot
    assertThat(counts(s, 300)).containsOnlyKeys("b:2", "c:3");
    s.remove(c);
    assertThat(counts(s, 50)).containsOnlyKeys("b:2");
    s.add(a);
    assertThat(s.rotation()).extracting(Member::identifier).containsExactlyInAnyOrder("a:1", "b:2");
  }

  @Test
  void theArrayGrowsPastItsFirstCapacity() {
    RandomStrategy s = new RandomStrategy();
    List<TestMember> many = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      many.add(new TestMember("m" + i));
      s.add(many.get(i));
    }
    for (int i = 0; i < 40; i += 2) {
      s.remove(many.get(i));
    }
    Set<String> chosen = new HashSet<>(counts(s, 2_000).keySet());
    assertThat(chosen)
        .hasSize(20)
        .allSatisfy(id -> assertThat(Integer.parseInt(id.substring(1)) % 2).isOne());
  }

  // --- two random choices

  @Test
  void twoRandomChoicesNeverPicksAMemberBusierThanAllOthers() {
    TwoRandomChoicesStrategy s = new TwoRandomChoicesStrategy();
    s.add(a.pending(0));
    s.add(b.pending(5));
    s.add(c.pending(1));
    Map<String, Integer> counts = counts(s, 3_000);
    assertThat(counts).doesNotContainKey("b:2"); // it loses to whichever other it is drawn with
    // a wins against b and c; c only when drawn with b: about a third of the time
    assertThat(counts.get("a:1")).isGreaterThan(counts.get("c:3"));
    assertThat(counts.get("c:3")).isBetween(600, 1_400);
  }

  @Test
  void twoRandomChoicesWithOneMemberPicksIt() {
    TwoRandomChoicesStrategy s = new TwoRandomChoicesStrategy();
    s.add(b.pending(9));
    assertThat(counts(s, 10)).containsOnlyKeys("b:2");
  }

  // --- fewest pending

  @Test
  void fewestPendingPicksTheLeastBusyAndIdleMembersTakeTurns() {
    FewestPendingStrategy s = new FewestPendingStrategy();
    s.add(a);
    s.add(b);
    s.add(c);
    assertThat(sequence(s, 6)).containsExactly("a:1", "b:2", "c:3", "a:1", "b:2", "c:3");

    a.pending(3);
    b.pending(1);
    c.pending(2);
    assertThat(sequence(s, 3)).containsOnly("b:2");
    b.pending(2); // b and c tie: they take turns
    assertThat(sequence(s, 4)).containsExactlyInAnyOrder("b:2", "c:3", "b:2", "c:3");
  }

  @Test
  void fewestPendingCountsLeasesAsTheyAreHandedOut() {
    FewestPendingStrategy s = new FewestPendingStrategy();
    s.add(a);
    s.add(b);
    List<CountedLease> leases = new ArrayList<>();
    Map<String, Integer> counts = new HashMap<>();
    for (int i = 0; i < 10; i++) {
      Member m = s.choose(META);
      counts.merge(m.identifier(), 1, Integer::sum);
      leases.add(CountedLease.start(new FakePeer(m.identifier()), m.pending));
    }
    assertThat(counts).containsEntry("a:1", 5).containsEntry("b:2", 5);
    leases.forEach(l -> l.finish(null));
    assertThat(a.pendingRequests()).isZero();
  }

  // --- hash ring

  @Test
  void hashRingKeepsAKeyOnOneMemberAndSpreadsKeys() {
    HashRingStrategy s = new HashRingStrategy(100, "", null, 0, null, null);
    s.add(a);
    s.add(b);
    s.add(c);
    Map<String, Integer> perMember = new HashMap<>();
    for (int k = 0; k < 300; k++) {
      Member first = s.choose(meta("key-" + k));
      for (int i = 0; i < 5; i++) {
        assertThat(s.choose(meta("key-" + k))).isSameAs(first);
      }
      perMember.merge(first.identifier(), 1, Integer::sum);
    }
    assertThat(perMember).containsOnlyKeys("a:1", "b:2", "c:3");
    assertThat(s.rotation()).extracting(Member::identifier).containsExactly("a:1", "b:2", "c:3");
  }

  @Test
  void hashRingWithoutAKeyPicksAtRandom() {
    HashRingStrategy s = new HashRingStrategy(100, "", null, 0, null, null);
    s.add(a);
    s.add(b);
    s.add(c);
    assertThat(counts(s, 600)).containsOnlyKeys("a:1", "b:2", "c:3");
  }

  @Test
  void hashRingHeadersOverrideTheMemberTheKeyAndTheOffset() {
    HashRingStrategy s = new HashRingStrategy(100, "#", "X-Offset", 0, "X-Peer", "X-Key");
    s.add(a);
    s.add(b);
    s.add(c);
    // the alternate key header is the key; the shard key is then ignored
    Member owner = s.choose(meta("ignored", "x-key", "user-7"));
    assertThat(s.choose(meta("other", "X-Key", "user-7"))).isSameAs(owner);
    // offsets 0, 1, 2 reach the three members
    Set<Member> byOffset = new HashSet<>();
    for (int n = 0; n < 3; n++) {
      byOffset.add(s.choose(meta("", "X-Key", "user-7", "X-Offset", String.valueOf(n))));
    }
    assertThat(byOffset).containsExactlyInAnyOrder(a, b, c);
    // the override header wins when it names a member in rotation, and is ignored otherwise
    assertThat(s.choose(meta("", "X-Key", "user-7", "X-Peer", "c:3"))).isSameAs(c);
    assertThat(s.choose(meta("", "X-Key", "user-7", "X-Peer", "z:9"))).isSameAs(owner);
    s.remove(c);
    assertThat(s.choose(meta("", "X-Key", "user-7", "X-Peer", "c:3"))).isNotSameAs(c);
  }

  @Test
  void hashRingOffsetGeneratorSpreadsOneKeyOverThatManyMembers() {
    HashRingStrategy s = new HashRingStrategy(100, "", null, 2, null, null);
    List<TestMember> five = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      five.add(new TestMember("m" + i));
      s.add(five.get(i));
    }
    Set<String> chosen = new HashSet<>();
    for (int i = 0; i < 200; i++) {
      chosen.add(s.choose(meta("user-7")).identifier());
    }
    assertThat(chosen).hasSize(2);
  }

  @Test
  void hashRingRefusesAnOffsetThatIsNotANonNegativeInteger() {
    HashRingStrategy s = new HashRingStrategy(100, "", "X-Offset", 0, null, null);
    s.validate(meta("k", "X-Offset", "2")); // fine
    s.validate(meta("k")); // no header: fine
    for (String bad : List.of("-1", "two", "", "1.5", "99999999999")) {
      YarpcException e =
          catchThrowableOfType(() -> s.validate(meta("k", "X-Offset", bad)), YarpcException.class);
      assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
      assertThat(e.getMessage())
          .isEqualTo(
              "\"hashring32\" peer list: header x-offset must be a ring offset (an integer from 0 to"
                  + " 999999999), got \""
                  + bad
                  + "\"");
    }
  }

  /** A peer for a lease; the strategies never look at it. */
  private static final class FakePeer implements io.yarpc.peer.Peer {
    private final String id;

    FakePeer(String id) {
      this.id = id;
    }

    @Override
    public String identifier() {
      return id;
    }

    @Override
    public io.yarpc.peer.ConnectionStatus status() {
      return io.yarpc.peer.ConnectionStatus.AVAILABLE;
    }
  }
}
