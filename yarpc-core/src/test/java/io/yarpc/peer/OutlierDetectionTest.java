package io.yarpc.peer;

import static io.yarpc.peer.ConnectionStatus.AVAILABLE;
import static io.yarpc.peer.ConnectionStatus.UNAVAILABLE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.RequestMeta;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Outlier ejection on a round-robin list over fake peers, with a hand-driven clock: which outcomes count,
 * ejection, probation and its probe, growing and decaying ejection times, the limits on how many peers
 * may be out, and what introspection shows. (Every strategy ejects alike: {@link
 * PeerListMechanicsTest}; real transports: the HTTP module's {@code OutlierEjectionTest}.)
 */
@Timeout(30)
class OutlierDetectionTest {
  private static final YarpcException BOOM = YarpcException.of(Code.UNAVAILABLE, "boom");
  private static final RequestMeta META =
      RequestMeta.builder().service("svc").procedure("proc").build();

  private final FakePeerTransport transport = new FakePeerTransport();
  private final ManualScheduler clock = new ManualScheduler();
  private final List<AbstractPeerList> lists = new ArrayList<>();

  @AfterEach
  void stopListsAndCheckBalance() {
    lists.forEach(AbstractPeerList::stop);
    assertThat(transport.outstandingRetains()).as("retains not released").isZero();
    assertThat(transport.errors()).isEmpty();
    assertThat(clock.pending()).as("ejection timers left after stop").isZero();
  }

  private AbstractPeerList started(OutlierDetection settings, String... ids) {
    AbstractPeerList list =
        RoundRobinPeerList.builder(transport)
            .peers(List.of(ids))
            .outlierDetection(settings)
            .scheduler(clock)
            .build();
    lists.add(list);
    list.start();
    return list;
  }

  private static OutlierDetection.Builder consecutive(int failures) {
    return OutlierDetection.builder().consecutiveFailures(failures);
  }

  /** A lease on {@code id}; the leases the list gives other peers meanwhile end in success. */
  private static PeerLease leaseOn(AbstractPeerList list, String id) {
    return leaseOn(list, id, META);
  }

  private static PeerLease leaseOn(AbstractPeerList list, String id, RequestMeta meta) {
    for (int i = 0; i < 100; i++) {
      PeerLease lease = list.choose(meta).join();
      if (lease.peer().identifier().equals(id)) {
        return lease;
      }
      lease.finish(null);
    }
    throw new AssertionError(id + " was not chosen in 100 choices: " + list.availablePeers());
  }

  /** Ends {@code n} calls on {@code id} with {@code error}. */
  private static void calls(AbstractPeerList list, String id, int n, Throwable error) {
    for (int i = 0; i < n; i++) {
      leaseOn(list, id).finish(error);
    }
  }

  private static PeerStatus status(AbstractPeerList list, String id) {
    return list.introspect().peers().stream()
        .filter(p -> p.identifier().equals(id))
        .findFirst()
        .orElseThrow();
  }

  private static void assertEjected(AbstractPeerList list, String id) {
    assertThat(list.availablePeers()).doesNotContain(id);
    assertThat(list.unavailablePeers()).contains(id);
    assertThat(status(list, id).status()).isEqualTo(UNAVAILABLE);
  }

  private static void assertInRotation(AbstractPeerList list, String id) {
    assertThat(list.availablePeers()).contains(id);
    assertThat(status(list, id)).isEqualTo(new PeerStatus(id, AVAILABLE, null, 0));
  }

  @Test
  void consecutiveFailuresEjectThePeerWhichThenGetsNoCalls() {
    AbstractPeerList list = started(consecutive(3).build(), "a:1", "b:2", "c:3");
    calls(list, "b:2", 2, BOOM);
    assertInRotation(list, "b:2");

    calls(list, "b:2", 1, BOOM);
    assertEjected(list, "b:2");
    assertThat(status(list, "b:2").unavailableReason())
        .isEqualTo(
            "ejected for 30s after 3 consecutive failures (last: unavailable: boom);"
                + " on probation in 30s");
    clock.advance(Duration.ofSeconds(12));
    assertThat(status(list, "b:2").unavailableReason()).endsWith("; on probation in 18s");
    for (int i = 0; i < 30; i++) {
      PeerLease lease = list.choose(META).join();
      assertThat(lease.peer().identifier()).isNotEqualTo("b:2");
      lease.finish(null);
    }
  }

  @Test
  void aSuccessOrACallerErrorEndsARunOfFailures() {
    AbstractPeerList list = started(consecutive(3).build(), "a:1", "b:2");
    calls(list, "b:2", 2, BOOM);
    calls(list, "b:2", 1, null);
    calls(list, "b:2", 2, BOOM);
    calls(list, "b:2", 1, YarpcException.of(Code.INVALID_ARGUMENT, "bad input"));
    calls(list, "b:2", 2, BOOM);
    assertInRotation(list, "b:2");
    calls(list, "b:2", 1, BOOM);
    assertEjected(list, "b:2");
  }

  @Test
  void serverFaultsAndPassedDeadlinesAreFailures() {
    List<Throwable> failures =
        List.of(
            YarpcException.of(Code.UNKNOWN, "x"),
            YarpcException.of(Code.DEADLINE_EXCEEDED, "x"),
            YarpcException.of(Code.INTERNAL, "x"),
            YarpcException.of(Code.UNAVAILABLE, "x").withUnprocessed(), // could not connect
            YarpcException.of(Code.DATA_LOSS, "x"),
            new IOException("Connection reset by peer"), // not a YARPC error: unknown
            new java.util.concurrent.CompletionException(YarpcException.of(Code.INTERNAL, "x")));
    for (Throwable failure : failures) {
      AbstractPeerList list = started(consecutive(1).build(), "a:1", "b:2");
      calls(list, "b:2", 1, failure);
      assertThat(list.availablePeers()).as("after %s", failure).containsExactly("a:1");
    }

    // a call cut off (cancelled) after its deadline passed
    AbstractPeerList list = started(consecutive(1).build(), "a:1", "b:2");
    Deadline passed = Deadline.after(Duration.ofNanos(1));
    while (!passed.isExpired()) {
      Thread.onSpinWait();
    }
    leaseOn(list, "b:2", META.toBuilder().deadline(passed).build())
        .finish(new CancellationException());
    assertEjected(list, "b:2");
    assertThat(status(list, "b:2").unavailableReason())
        .contains(
            "after 1 consecutive failures (last: deadline-exceeded: the call's deadline passed"
                + " before an answer)");
  }

  @Test
  void callerErrorsCancellationsAndAbandonedCallsAreNotFailures() {
    AbstractPeerList list = started(consecutive(1).build(), "a:1", "b:2");
    Deadline passed = Deadline.after(Duration.ofNanos(1));
    while (!passed.isExpired()) {
      Thread.onSpinWait();
    }
    RequestMeta late = META.toBuilder().deadline(passed).build();
    RequestMeta early = META.toBuilder().deadline(Deadline.after(Duration.ofMinutes(1))).build();
    for (Code code : Code.values()) {
      if (code != Code.OK && code.faultType() == io.yarpc.errors.FaultType.CLIENT) {
        leaseOn(list, "b:2").finish(YarpcException.of(code, "the caller's fault"));
      }
    }
    leaseOn(list, "b:2").finish(null); // a success, or an application error (a response)
    leaseOn(list, "b:2").finish(new CancellationException()); // cancelled, no deadline
    leaseOn(list, "b:2", early).finish(new CancellationException()); // cancelled in time
    leaseOn(list, "b:2", early).finish(YarpcException.of(Code.CANCELLED, "cancelled"));
    // given up before it was sent, with the deadline passed: nothing to learn
    leaseOn(list, "b:2", late).abandon();
    leaseOn(list, "b:2", late)
        .finish(YarpcException.of(Code.CANCELLED, "never sent").withUnprocessed());
    assertInRotation(list, "b:2");
    assertThat(list.pendingRequests("b:2")).isZero();
  }

  @Test
  void afterItsTimeThePeerIsOnProbationAndASuccessfulProbeRestoresIt() {
    AbstractPeerList list = started(consecutive(2).build(), "a:1", "b:2", "c:3");
    calls(list, "b:2", 2, BOOM);
    assertEjected(list, "b:2");
    clock.advance(Duration.ofSeconds(29));
    assertEjected(list, "b:2");
    clock.advance(Duration.ofSeconds(1));
    assertInRotation(list, "b:2"); // on probation: back in rotation for one call

    PeerLease probe = leaseOn(list, "b:2");
    assertThat(list.availablePeers()).containsExactlyInAnyOrder("a:1", "c:3");
    assertThat(status(list, "b:2"))
        .isEqualTo(
            new PeerStatus(
                "b:2",
                UNAVAILABLE,
                "on probation after an ejection: a probe call is in flight",
                1));
    for (int i = 0; i < 10; i++) { // while the probe is in flight, calls go elsewhere
      PeerLease other = list.choose(META).join();
      assertThat(other.peer().identifier()).isNotEqualTo("b:2");
      other.finish(null);
    }
    probe.finish(null);
    assertInRotation(list, "b:2");

    // restored with fresh counts: one failure does not eject, two do, for longer than the first
    // time
    calls(list, "b:2", 1, BOOM);
    assertInRotation(list, "b:2");
    calls(list, "b:2", 1, BOOM);
    assertEjected(list, "b:2");
    assertThat(status(list, "b:2").unavailableReason()).startsWith("ejected for 1m0s after 2");
  }

  @Test
  void aFailedProbeEjectsAgainForLongerUpToTheMaximum() {
    AbstractPeerList list =
        started(
            consecutive(1)
                .baseEjectionTime(Duration.ofSeconds(30))
                .maxEjectionTime(Duration.ofSeconds(75))
                .build(),
            "a:1",
            "b:2");
    calls(list, "b:2", 1, BOOM);
    assertThat(status(list, "b:2").unavailableReason()).startsWith("ejected for 30s after");

    clock.advance(Duration.ofSeconds(30));
    leaseOn(list, "b:2").finish(YarpcException.of(Code.INTERNAL, "still broken"));
    assertEjected(list, "b:2");
    assertThat(status(list, "b:2").unavailableReason())
        .isEqualTo(
            "ejected for 1m0s after a probe call failed (last: internal: still broken);"
                + " on probation in 1m0s");
    clock.advance(Duration.ofSeconds(59));
    assertEjected(list, "b:2");
    clock.advance(Duration.ofSeconds(1));
    assertInRotation(list, "b:2");

    leaseOn(list, "b:2").finish(BOOM);
    assertThat(status(list, "b:2").unavailableReason()).startsWith("ejected for 1m15s after");
    clock.advance(Duration.ofSeconds(75));
    leaseOn(list, "b:2").finish(BOOM);
    assertThat(status(list, "b:2").unavailableReason()).startsWith("ejected for 1m15s after");
  }

  @Test
  void aProbeThatSaysNothingLeavesThePeerOnProbationAndOnlyTheProbeDecides() {
    AbstractPeerList list = started(consecutive(1).build(), "a:1", "b:2");
    PeerLease slow = leaseOn(list, "b:2"); // a call that began before the ejection
    calls(list, "b:2", 1, BOOM);
    assertEjected(list, "b:2");
    clock.advance(Duration.ofSeconds(30));
    leaseOn(list, "b:2").finish(new CancellationException()); // the caller gave up
    assertThat(list.availablePeers()).contains("b:2");
    leaseOn(list, "b:2").abandon(); // never sent
    assertThat(list.availablePeers()).contains("b:2");

    PeerLease probe = leaseOn(list, "b:2"); // still the probe: b leaves rotation again
    assertThat(list.availablePeers()).containsExactly("a:1");
    slow.finish(BOOM); // not the probe: changes nothing
    assertThat(status(list, "b:2").unavailableReason())
        .isEqualTo("on probation after an ejection: a probe call is in flight");
    probe.finish(null);
    assertInRotation(list, "b:2");
  }

  @Test
  void timeInRotationTakesEjectionsOffTheCount() {
    OutlierDetection settings = consecutive(1).interval(Duration.ofSeconds(10)).build();
    AbstractPeerList list = started(settings, "a:1", "b:2");
    calls(list, "b:2", 1, BOOM); // 1st: 30s
    clock.advance(Duration.ofSeconds(30));
    leaseOn(list, "b:2").finish(BOOM); // 2nd: 1m
    clock.advance(Duration.ofSeconds(60));
    leaseOn(list, "b:2").finish(null); // restored with a count of 2

    clock.advance(Duration.ofSeconds(10)); // one interval: the count goes to 1, the next is the 2nd
    calls(list, "b:2", 1, BOOM);
    assertThat(status(list, "b:2").unavailableReason()).startsWith("ejected for 1m0s after 1");
    clock.advance(Duration.ofSeconds(60));
    leaseOn(list, "b:2").finish(null);

    clock.advance(Duration.ofSeconds(25)); // two intervals: back to 0, the next is a 1st again
    calls(list, "b:2", 1, BOOM);
    assertThat(status(list, "b:2").unavailableReason()).startsWith("ejected for 30s after 1");
  }

  @Test
  void atMostMaxEjectionPercentOfThePeersAreHeldOutAndAtLeastOne() {
    // 10 % of 3 peers rounds down to 0: one may still be ejected
    AbstractPeerList three = started(consecutive(1).build(), "a:1", "b:2", "c:3");
    calls(three, "b:2", 1, BOOM);
    calls(three, "c:3", 3, BOOM);
    assertEjected(three, "b:2");
    assertInRotation(three, "c:3");

    // 50 % of 4: two; a third failing peer stays
    AbstractPeerList four =
        started(consecutive(1).maxEjectionPercent(50).build(), "w:1", "x:2", "y:3", "z:4");
    calls(four, "w:1", 1, BOOM);
    clock.advance(Duration.ofSeconds(10));
    calls(four, "x:2", 1, BOOM);
    calls(four, "y:3", 2, BOOM);
    assertThat(four.availablePeers()).containsExactlyInAnyOrder("y:3", "z:4");

    // a peer on probation still counts; once it is restored, the failing peer is ejected at its
    // next
    // failure
    clock.advance(Duration.ofSeconds(20));
    PeerLease probe = leaseOn(four, "w:1");
    calls(four, "y:3", 1, BOOM);
    assertThat(four.availablePeers()).containsExactlyInAnyOrder("y:3", "z:4");
    probe.finish(null);
    calls(four, "y:3", 1, BOOM);
    assertThat(four.availablePeers()).containsExactlyInAnyOrder("w:1", "z:4");
  }

  @Test
  void theLastPeerInRotationIsNeverEjected() {
    AbstractPeerList list =
        started(consecutive(1).maxEjectionPercent(100).build(), "a:1", "b:2", "c:3");
    calls(list, "a:1", 1, BOOM);
    calls(list, "b:2", 1, BOOM);
    assertThat(list.availablePeers()).containsExactly("c:3");
    calls(list, "c:3", 5, BOOM);
    assertThat(list.availablePeers()).containsExactly("c:3");

    // one peer of two is not connected: the other, failing, stays too
    AbstractPeerList two = started(consecutive(1).maxEjectionPercent(100).build(), "x:1", "y:2");
    transport.setStatus("x:1", UNAVAILABLE);
    calls(two, "y:2", 3, BOOM);
    assertThat(two.availablePeers()).containsExactly("y:2");
  }

  @Test
  void aFailurePercentOverAnIntervalEjectsOnceThereAreEnoughCalls() {
    OutlierDetection settings =
        OutlierDetection.builder()
            .consecutiveFailures(0)
            .failurePercent(50)
            .minRequests(10)
            .interval(Duration.ofSeconds(10))
            .build();
    AbstractPeerList list = started(settings, "a:1", "b:2");
    for (int i = 0; i < 4; i++) { // 8 calls, half failed: not enough calls yet
      calls(list, "b:2", 1, BOOM);
      calls(list, "b:2", 1, null);
    }
    assertInRotation(list, "b:2");
    clock.advance(Duration.ofSeconds(10)); // a new interval: the 8 no longer count
    for (int i = 0; i < 4; i++) {
      calls(list, "b:2", 1, null);
      calls(list, "b:2", 1, BOOM);
    }
    calls(list, "b:2", 1, null); // 4 of 9
    assertInRotation(list, "b:2");
    calls(list, "b:2", 1, BOOM); // 5 of 10
    assertEjected(list, "b:2");
    assertThat(status(list, "b:2").unavailableReason())
        .startsWith("ejected for 30s after 5 of 10 calls failed within 10s (last: unavailable");
  }

  @Test
  void choicesWaitingWhenAnEjectionEndsGetThePeerOnProbation() throws Exception {
    AbstractPeerList list = started(consecutive(1).build(), "a:1", "b:2");
    calls(list, "b:2", 1, BOOM);
    transport.setStatus("a:1", UNAVAILABLE);
    CompletableFuture<PeerLease> waiting =
        list.choose(META.toBuilder().deadline(Deadline.after(Duration.ofSeconds(20))).build());
    CompletableFuture<PeerLease> second =
        list.choose(META.toBuilder().deadline(Deadline.after(Duration.ofSeconds(20))).build());
    assertThat(waiting).isNotDone();

    clock.advance(Duration.ofSeconds(30));
    PeerLease probe = waiting.get(10, TimeUnit.SECONDS);
    assertThat(probe.peer().identifier()).isEqualTo("b:2");
    assertThat(second).as("the probe took b out of rotation: the next keeps waiting").isNotDone();
    probe.finish(null);
    PeerLease next = second.get(10, TimeUnit.SECONDS);
    assertThat(next.peer().identifier()).isEqualTo("b:2");
    next.finish(null);
  }

  @Test
  void aRemovedPeerFreesItsPlaceAndItsTimer() {
    AbstractPeerList list = started(consecutive(1).build(), "a:1", "b:2", "c:3");
    calls(list, "b:2", 1, BOOM);
    calls(list, "c:3", 1, BOOM);
    assertThat(list.availablePeers()).containsExactlyInAnyOrder("a:1", "c:3");
    assertThat(clock.pending()).isOne();

    list.update(List.of(), List.of("b:2"));
    assertThat(clock.pending()).isZero();
    calls(list, "c:3", 1, BOOM);
    assertThat(list.availablePeers()).containsExactly("a:1");

    list.update(List.of("b:2"), List.of()); // a new membership: healthy
    assertInRotation(list, "b:2");
  }

  @Test
  void offByDefault() {
    AbstractPeerList list =
        RoundRobinPeerList.builder(transport).peers(List.of("a:1", "b:2")).build();
    lists.add(list);
    list.start();
    calls(list, "b:2", 50, BOOM);
    assertInRotation(list, "b:2");
  }

  @Test
  void defaultsAreEnvoysAndGrpcs() {
    OutlierDetection d = OutlierDetection.defaults();
    assertThat(d.consecutiveFailures()).isEqualTo(5);
    assertThat(d.failurePercent()).isZero();
    assertThat(d.minRequests()).isEqualTo(50);
    assertThat(d.interval()).isEqualTo(Duration.ofSeconds(10));
    assertThat(d.baseEjectionTime()).isEqualTo(Duration.ofSeconds(30));
    assertThat(d.maxEjectionTime()).isEqualTo(Duration.ofMinutes(5));
    assertThat(d.maxEjectionPercent()).isEqualTo(10);
    assertThat(
            OutlierDetection.builder()
                .baseEjectionTime(Duration.ofMinutes(10))
                .build()
                .maxEjectionTime())
        .as("an unset maximum is at least the base")
        .isEqualTo(Duration.ofMinutes(10));
    assertThat(d.toString())
        .isEqualTo(
            "OutlierDetection{consecutiveFailures=5, failurePercent=0, minRequests=50,"
                + " interval=10s, baseEjectionTime=30s, maxEjectionTime=5m0s,"
                + " maxEjectionPercent=10}");
  }

  @Test
  void theBuilderRefusesBadSettings() {
    OutlierDetection.Builder b = OutlierDetection.builder();
    assertThatThrownBy(() -> b.consecutiveFailures(-1))
        .hasMessage("consecutiveFailures must not be negative: -1");
    assertThatThrownBy(() -> b.failurePercent(101))
        .hasMessage("failurePercent must be from 0 to 100: 101");
    assertThatThrownBy(() -> b.failurePercent(-1))
        .hasMessage("failurePercent must be from 0 to 100: -1");
    assertThatThrownBy(() -> b.minRequests(0)).hasMessage("minRequests must be at least 1: 0");
    assertThatThrownBy(() -> b.interval(Duration.ZERO))
        .hasMessage("interval must be positive: PT0S");
    assertThatThrownBy(() -> b.baseEjectionTime(Duration.ofSeconds(-1)))
        .hasMessage("baseEjectionTime must be positive: PT-1S");
    assertThatThrownBy(() -> b.maxEjectionTime(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> b.maxEjectionPercent(0))
        .hasMessage("maxEjectionPercent must be from 1 to 100: 0");
    assertThatThrownBy(() -> b.maxEjectionPercent(101))
        .hasMessage("maxEjectionPercent must be from 1 to 100: 101");
    assertThatThrownBy(() -> OutlierDetection.builder().consecutiveFailures(0).build())
        .hasMessage("outlier detection needs consecutiveFailures or failurePercent: both are 0");
    assertThatThrownBy(
            () ->
                OutlierDetection.builder()
                    .baseEjectionTime(Duration.ofMinutes(1))
                    .maxEjectionTime(Duration.ofSeconds(30))
                    .build())
        .hasMessage("maxEjectionTime (30s) must not be shorter than baseEjectionTime (1m0s)");
  }
}
