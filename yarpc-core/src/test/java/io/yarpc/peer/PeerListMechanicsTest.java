package io.yarpc.peer;

import static io.yarpc.peer.ConnectionStatus.AVAILABLE;
import static io.yarpc.peer.ConnectionStatus.CONNECTING;
import static io.yarpc.peer.ConnectionStatus.UNAVAILABLE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Headers;
import io.yarpc.transport.RequestMeta;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The mechanics every list shares, run against each strategy: rotation follows availability, waiting,
 * cancellation, updates while calls are in flight, and retain/release balance under concurrency. (The
 * round-robin order and the mechanics' error texts are in {@link RoundRobinPeerListTest}.)
 */
@Timeout(60)
class PeerListMechanicsTest {
  private final FakePeerTransport transport = new FakePeerTransport();
  private final List<AbstractPeerList> lists = new ArrayList<>();

  @AfterEach
  void stopListsAndCheckBalance() {
    lists.forEach(AbstractPeerList::stop);
    assertThat(transport.outstandingRetains()).as("retains not released").isZero();
    assertThat(transport.errors()).isEmpty();
  }

  static Stream<Arguments> lists() {
    return Stream.of(
        list(RoundRobinPeerList.NAME, RoundRobinPeerList::builder),
        list(FewestPendingPeerList.NAME, FewestPendingPeerList::builder),
        list(RandomPeerList.NAME, RandomPeerList::builder),
        list(TwoRandomChoicesPeerList.NAME, TwoRandomChoicesPeerList::builder),
        list(HashRingPeerList.NAME, HashRingPeerList::builder));
  }

  private static Arguments list(
      String name, Function<PeerTransport, AbstractPeerList.Builder<?, ?>> builder) {
    return Arguments.of(name, builder);
  }

  private AbstractPeerList started(
      Function<PeerTransport, AbstractPeerList.Builder<?, ?>> builder, String... ids) {
    AbstractPeerList list = builder.apply(transport).peers(List.of(ids)).build();
    lists.add(list);
    list.start();
    return list;
  }

  private static final AtomicInteger KEYS = new AtomicInteger();

  /** A call with a fresh shard key, so the hash ring spreads calls as the others do. */
  private static RequestMeta meta() {
    return RequestMeta.builder()
        .service("svc")
        .procedure("proc")
        .shardKey("key-" + KEYS.incrementAndGet())
        .build();
  }

  private static RequestMeta meta(Duration timeout) {
    return meta().toBuilder().deadline(Deadline.after(timeout)).build();
  }

  private static PeerLease await(CompletableFuture<PeerLease> f) throws Exception {
    return f.get(10, TimeUnit.SECONDS);
  }

  private static void assertNoPendingLeases(AbstractPeerList list, String... ids) {
    for (String id : ids) {
      assertThat(list.pendingRequests(id)).as("pending leases on %s", id).isZero();
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("lists")
  void choosesOnlyPeersInRotationAndFollowsTheirStatus(
      String name, Function<PeerTransport, AbstractPeerList.Builder<?, ?>> builder)
      throws Exception {
    transport.initialStatus("b:2", UNAVAILABLE);
    AbstractPeerList list = started(builder, "a:1", "b:2", "c:3");
    assertThat(list.name()).isEqualTo(name);
    assertThat(list.introspect().kind()).isEqualTo(name);
    assertThat(list.availablePeers()).containsExactlyInAnyOrder("a:1", "c:3");
    assertThat(list.unavailablePeers()).containsExactly("b:2");

    Map<String, Integer> chosen = new HashMap<>();
    for (int i = 0; i < 300; i++) {
      PeerLease lease = await(list.choose(meta()));
      chosen.merge(lease.peer().identifier(), 1, Integer::sum);
      lease.finish(null);
    }
    assertThat(chosen).containsOnlyKeys("a:1", "c:3");

    transport.setStatus("b:2", AVAILABLE);
    transport.setStatus("a:1", CONNECTING);
    chosen.clear();
    for (int i = 0; i < 300; i++) {
      PeerLease lease = await(list.choose(meta()));
      chosen.merge(lease.peer().identifier(), 1, Integer::sum);
      lease.finish(null);
    }
    assertThat(chosen).containsOnlyKeys("b:2", "c:3");
    assertNoPendingLeases(list, "a:1", "b:2", "c:3");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("lists")
  void aWaitingCallGetsThePeerThatBecomesAvailable(
      String name, Function<PeerTransport, AbstractPeerList.Builder<?, ?>> builder)
      throws Exception {
    transport.initialStatus("a:1", CONNECTING);
    transport.initialStatus("b:2", CONNECTING);
    AbstractPeerList list = started(builder, "a:1", "b:2");
    CompletableFuture<PeerLease> waiting = list.choose(meta(Duration.ofSeconds(10)));
    assertThat(waiting).isNotDone();
    assertThat(list.waitReason())
        .isEqualTo("none of the 2 peers of the \"" + name + "\" peer list is available");

    transport.setStatus("b:2", AVAILABLE);

    PeerLease lease = await(waiting);
    assertThat(lease.peer().identifier()).isEqualTo("b:2");
    assertThat(list.pendingRequests("b:2")).isOne();
    lease.finish(null);
    assertThat(list.waitReason()).isNull();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("lists")
  void failFastAndTimeoutsNameTheList(
      String name, Function<PeerTransport, AbstractPeerList.Builder<?, ?>> builder) {
    transport.initialStatus("a:1", CONNECTING);
    AbstractPeerList fast = builder.apply(transport).peers(List.of("a:1")).failFast(true).build();
    lists.add(fast);
    fast.start();
    CompletableFuture<PeerLease> f = fast.choose(meta(Duration.ofSeconds(10)));
    assertThat(f).isCompletedExceptionally();
    assertThat(failure(f).getMessage())
        .isEqualTo(
            "\""
                + name
                + "\" peer list has 1 peer but it is not responsive, did not wait for a connection"
                + " to open (fail-fast is enabled)");

    AbstractPeerList empty = builder.apply(transport).build();
    lists.add(empty);
    empty.start();
    YarpcException e = failure(empty.choose(meta(Duration.ofMillis(30))));
    assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(e.getMessage())
        .startsWith(
            "\"" + name + "\" peer list has no peers, waited for peers to be added but timed out");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("lists")
  void cancellingAWaitingChoiceLeavesNoLease(
      String name, Function<PeerTransport, AbstractPeerList.Builder<?, ?>> builder)
      throws Exception {
    transport.initialStatus("a:1", CONNECTING);
    transport.initialStatus("b:2", CONNECTING);
    AbstractPeerList list = started(builder, "a:1", "b:2");
    List<CompletableFuture<PeerLease>> cancelled = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      cancelled.add(list.choose(meta(Duration.ofSeconds(10))));
    }
    cancelled.forEach(f -> f.cancel(false));

    transport.setStatus("a:1", AVAILABLE);
    transport.setStatus("b:2", AVAILABLE);
    assertNoPendingLeases(list, "a:1", "b:2");
    assertThat(list.toString()).contains("waiting=0");

    // a cancellation racing the peer's arrival: whichever wins, no lease is left behind
    for (int round = 0; round < 200; round++) {
      transport.setStatus("a:1", CONNECTING);
      transport.setStatus("b:2", CONNECTING);
      CompletableFuture<PeerLease> f = list.choose(meta(Duration.ofSeconds(10)));
      CountDownLatch go = new CountDownLatch(1);
      Thread canceller =
          new Thread(
              () -> {
                try {
                  go.await();
                } catch (InterruptedException e) {
                  return;
                }
                f.cancel(false);
              });
      canceller.start();
      go.countDown();
      transport.setStatus(round % 2 == 0 ? "a:1" : "b:2", AVAILABLE);
      canceller.join();
      if (!f.isCancelled()) {
        f.join().finish(null); // the grant won: the caller owns the lease and finishes it
      }
      assertNoPendingLeases(list, "a:1", "b:2");
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("lists")
  void peersRemovedAndAddedDuringCallsKeepCountsAndRetainsBalanced(
      String name, Function<PeerTransport, AbstractPeerList.Builder<?, ?>> builder)
      throws Exception {
    AbstractPeerList list = started(builder, "a:1");
    List<PeerLease> inFlight = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      inFlight.add(await(list.choose(meta())));
    }
    assertThat(list.pendingRequests("a:1")).isEqualTo(3);

    list.update(List.of("b:2"), List.of("a:1")); // a's calls are still in flight
    assertThat(transport.releaseCount("a:1")).isOne();
    assertThat(list.pendingRequests("a:1")).isZero(); // not in the list any more
    for (int i = 0; i < 20; i++) {
      PeerLease lease = await(list.choose(meta()));
      assertThat(lease.peer().identifier()).isEqualTo("b:2");
      lease.finish(null);
    }

    list.update(List.of("a:1"), List.of()); // a new membership: its count starts from 0
    assertThat(transport.retainCount("a:1")).isEqualTo(2);
    inFlight.forEach(l -> l.finish(null)); // the old membership's calls end
    assertNoPendingLeases(list, "a:1", "b:2");
    assertThat(list.availablePeers()).containsExactlyInAnyOrder("a:1", "b:2");

    list.stop();
    assertThat(transport.releaseCount("a:1")).isEqualTo(2);
    assertThat(transport.releaseCount("b:2")).isOne();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("lists")
  void concurrentChoicesUpdatesAndStatusChangesStayConsistent(
      String name, Function<PeerTransport, AbstractPeerList.Builder<?, ?>> builder)
      throws Exception {
    List<String> ids = List.of("a:1", "b:2", "c:3", "d:4");
    AbstractPeerList list = started(builder, "a:1", "b:2");
    int threads = 4;
    int perThread = 300;
    AtomicInteger successes = new AtomicInteger();
    AtomicInteger failures = new AtomicInteger();
    Map<String, Boolean> unexpected = new ConcurrentHashMap<>();
    AtomicBoolean done = new AtomicBoolean();
    CountDownLatch go = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads + 2);
    try {
      List<Future<?>> choosers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        choosers.add(
            pool.submit(
                () -> {
                  go.await();
                  for (int i = 0; i < perThread; i++) {
                    CompletableFuture<PeerLease> f = list.choose(meta(Duration.ofMillis(10)));
                    if (i % 7 == 0) {
                      f.cancel(false); // a caller that gives up
                    }
                    try {
                      PeerLease lease = f.get(10, TimeUnit.SECONDS);
                      if (!ids.contains(lease.peer().identifier())) {
                        unexpected.put("chose " + lease.peer().identifier(), true);
                      }
                      successes.incrementAndGet();
                      lease.finish(null);
                    } catch (ExecutionException e) {
                      if (!(e.getCause() instanceof YarpcException)
                          || ((YarpcException) e.getCause()).code() != Code.UNAVAILABLE) {
                        unexpected.put(String.valueOf(e.getCause()), true);
                      }
                      failures.incrementAndGet();
                    } catch (java.util.concurrent.CancellationException e) {
                      failures.incrementAndGet();
                    }
                  }
                  return null;
                }));
      }
      Future<?> flapper =
          pool.submit(
              () -> {
                go.await();
                ThreadLocalRandom random = ThreadLocalRandom.current();
                ConnectionStatus[] statuses = ConnectionStatus.values();
                while (!done.get()) {
                  transport.setStatus(
                      ids.get(random.nextInt(ids.size())),
                      statuses[random.nextInt(statuses.length)]);
                }
                return null;
              });
      Future<?> churner =
          pool.submit(
              () -> {
                go.await();
                ThreadLocalRandom random = ThreadLocalRandom.current();
                while (!done.get()) {
                  String id = ids.get(random.nextInt(ids.size()));
                  if (list.peerIdentifiers().contains(id)) {
                    list.update(List.of(), List.of(id));
                  } else {
                    list.update(List.of(id), List.of());
                  }
                  Thread.sleep(0, 100_000);
                }
                return null;
              });
      go.countDown();
      try {
        for (Future<?> f : choosers) {
          f.get(50, TimeUnit.SECONDS);
        }
      } finally {
        done.set(true);
      }
      flapper.get(10, TimeUnit.SECONDS);
      churner.get(10, TimeUnit.SECONDS);
    } finally {
      pool.shutdownNow();
    }

    assertThat(unexpected).isEmpty();
    assertThat(successes.get() + failures.get()).isEqualTo(threads * perThread);
    assertThat(successes.get()).isPositive();
    for (String id : ids) {
      transport.setStatus(id, AVAILABLE);
    }
    assertNoPendingLeases(list, ids.toArray(new String[0]));
    assertThat(list.availablePeers()).containsExactlyInAnyOrderElementsOf(list.peerIdentifiers());
    assertThat(list.unavailablePeers()).isEmpty();
    list.stop();
    assertThat(transport.outstandingRetains()).isZero();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("lists")
  void everyStrategyEjectsAFailingPeerAndTakesItBackThroughAProbe(
      String name, Function<PeerTransport, AbstractPeerList.Builder<?, ?>> builder)
      throws Exception {
    ManualScheduler clock = new ManualScheduler();
    AbstractPeerList list =
        builder
            .apply(transport)
            .peers(List.of("a:1", "b:2", "c:3"))
            .outlierDetection(OutlierDetection.builder().consecutiveFailures(3).build())
            .scheduler(clock)
            .build();
    lists.add(list);
    list.start();
    YarpcException down = YarpcException.of(Code.UNAVAILABLE, "down");
    Map<String, Integer> chosen = new HashMap<>();
    for (int i = 0; i < 300; i++) {
      PeerLease lease = await(list.choose(meta()));
      String id = lease.peer().identifier();
      chosen.merge(id, 1, Integer::sum);
      lease.finish(id.equals("b:2") ? down : null);
    }
    assertThat(chosen.get("b:2")).as("b's calls: %s", chosen).isEqualTo(3);
    assertThat(list.availablePeers()).containsExactlyInAnyOrder("a:1", "c:3");
    assertThat(list.introspect().peers().get(1).unavailableReason())
        .startsWith("ejected for 30s after 3 consecutive failures (last: unavailable: down)");

    clock.advance(Duration.ofSeconds(30));
    assertThat(list.availablePeers()).containsExactlyInAnyOrder("a:1", "b:2", "c:3");
    PeerLease probe = null;
    for (int i = 0; i < 1_000 && probe == null; i++) {
      PeerLease lease = await(list.choose(meta()));
      if (lease.peer().identifier().equals("b:2")) {
        probe = lease;
      } else {
        lease.finish(null);
      }
    }
    assertThat(probe).as("a probe call for b").isNotNull();
    assertThat(list.availablePeers()).containsExactlyInAnyOrder("a:1", "c:3");
    probe.finish(null);
    assertThat(list.availablePeers()).containsExactlyInAnyOrder("a:1", "b:2", "c:3");
    assertNoPendingLeases(list, "a:1", "b:2", "c:3");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("lists")
  void concurrentOutcomesEjectionsAndStatusChangesStayConsistent(
      String name, Function<PeerTransport, AbstractPeerList.Builder<?, ?>> builder)
      throws Exception {
    List<String> ids = List.of("a:1", "b:2", "c:3", "d:4");
    ManualScheduler clock = new ManualScheduler();
    AbstractPeerList list =
        builder
            .apply(transport)
            .peers(ids)
            .outlierDetection(
                OutlierDetection.builder()
                    .consecutiveFailures(2)
                    .failurePercent(40)
                    .minRequests(5)
                    .maxEjectionPercent(50)
                    .build())
            .scheduler(clock)
            .build();
    lists.add(list);
    list.start();
    int threads = 4;
    int perThread = 2_000;
    AtomicInteger tooManyOut = new AtomicInteger();
    AtomicBoolean done = new AtomicBoolean();
    CountDownLatch go = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads + 2);
    List<Throwable> outcomes =
        Arrays.asList(
            null,
            null,
            YarpcException.of(Code.INTERNAL, "x"),
            YarpcException.of(Code.NOT_FOUND, "x"),
            new java.util.concurrent.CancellationException());
    try {
      List<Future<?>> callers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        callers.add(
            pool.submit(
                () -> {
                  go.await();
                  ThreadLocalRandom random = ThreadLocalRandom.current();
                  for (int i = 0; i < perThread; i++) {
                    PeerLease lease;
                    try {
                      lease = list.choose(meta(Duration.ofMillis(20))).get(10, TimeUnit.SECONDS);
                    } catch (ExecutionException e) {
                      continue; // nothing in rotation for a moment: unavailable
                    }
                    // d fails most of its calls, the others now and then
                    boolean bad = lease.peer().identifier().equals("d:4") || random.nextInt(8) == 0;
                    if (random.nextInt(10) == 0) {
                      lease.abandon();
                    } else {
                      lease.finish(bad ? outcomes.get(2) : outcomes.get(random.nextInt(5)));
                    }
                    long out =
                        list.introspect().peers().stream()
                            .filter(p -> p.status() == UNAVAILABLE && p.unavailableReason() != null)
                            .filter(
                                p ->
                                    p.unavailableReason().startsWith("ejected")
                                        || p.unavailableReason().startsWith("on probation"))
                            .count();
                    if (out > 2) {
                      tooManyOut.incrementAndGet();
                    }
                  }
                  return null;
                }));
      }
      Future<?> ticker =
          pool.submit(
              () -> {
                go.await();
                ThreadLocalRandom random = ThreadLocalRandom.current();
                while (!done.get()) {
                  clock.advance(Duration.ofSeconds(random.nextInt(1, 40)));
                  Thread.sleep(1);
                }
                return null;
              });
      Future<?> flapper =
          pool.submit(
              () -> {
                go.await();
                ThreadLocalRandom random = ThreadLocalRandom.current();
                while (!done.get()) {
                  String id = ids.get(random.nextInt(ids.size()));
                  transport.setStatus(id, UNAVAILABLE);
                  transport.setStatus(id, AVAILABLE);
                  Thread.sleep(1);
                }
                return null;
              });
      go.countDown();
      try {
        for (Future<?> f : callers) {
          f.get(50, TimeUnit.SECONDS);
        }
      } finally {
        done.set(true);
      }
      ticker.get(10, TimeUnit.SECONDS);
      flapper.get(10, TimeUnit.SECONDS);
    } finally {
      pool.shutdownNow();
    }

    assertThat(tooManyOut.get()).as("snapshots with more than 50 %% held out").isZero();
    assertNoPendingLeases(list, ids.toArray(new String[0]));
    // nobody is stuck out: every ejection ends, and each probe that succeeds restores its peer
    for (int round = 0; round < 20 && list.availablePeers().size() < ids.size(); round++) {
      clock.advance(Duration.ofMinutes(10));
      for (int i = 0; i < 50; i++) {
        await(list.choose(meta())).finish(null);
      }
    }
    assertThat(list.availablePeers()).containsExactlyInAnyOrderElementsOf(ids);
    list.stop();
    assertThat(clock.pending()).as("ejection timers left").isZero();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("lists")
  void buildersRefuseBadOptions(
      String name, Function<PeerTransport, AbstractPeerList.Builder<?, ?>> builder) {
    assertThatThrownBy(() -> builder.apply(transport).peers(List.of("a:1", "b:2", "a:1")).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("\"" + name + "\" peer list: duplicate peer a:1");
    assertThatThrownBy(() -> builder.apply(transport).peers(Arrays.asList("a:1", null)))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("identifiers contains null");
    assertThatThrownBy(() -> builder.apply(transport).defaultChooseTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("defaultChooseTimeout");
    assertThatThrownBy(() -> builder.apply(null)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void hashRingBuilderRefusesBadRingOptions() {
    HashRingPeerList.Builder b = HashRingPeerList.builder(transport);
    assertThatThrownBy(() -> b.numReplicas(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("numReplicas must be from 1 to 10000: 0");
    assertThatThrownBy(() -> b.numReplicas(10_001))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("numReplicas must be from 1 to 10000: 10001");
    assertThatThrownBy(() -> b.offsetGeneratorValue(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("offsetGeneratorValue must not be negative: -1");
    assertThatThrownBy(() -> b.offsetHeader(""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("offsetHeader must not be empty");
    assertThatThrownBy(() -> b.peerOverrideHeader(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("peerOverrideHeader");
    assertThatThrownBy(() -> b.alternateShardKeyHeader(""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("alternateShardKeyHeader must not be empty");
    assertThatThrownBy(() -> b.replicaDelimiter(null)).isInstanceOf(NullPointerException.class);
  }

  // --- hashring32 through the list

  @Test
  void hashRingKeepsKeysOnTheirPeerAndMovesOnlyTheKeysOfAPeerThatLeaves() throws Exception {
    List<String> ids = List.of("a:1", "b:2", "c:3", "d:4");
    AbstractPeerList list = started(HashRingPeerList::builder, ids.toArray(new String[0]));
    Map<String, String> before = owners(list, 400);
    assertThat(owners(list, 400)).isEqualTo(before); // stable while membership is
    assertThat(before.values()).containsAll(ids);

    transport.setStatus("c:3", UNAVAILABLE); // leaves rotation: only its keys move
    Map<String, String> without = owners(list, 400);
    for (Map.Entry<String, String> e : before.entrySet()) {
      if (e.getValue().equals("c:3")) {
        assertThat(without.get(e.getKey())).isNotEqualTo("c:3");
      } else {
        assertThat(without.get(e.getKey())).as("owner of %s", e.getKey()).isEqualTo(e.getValue());
      }
    }

    transport.setStatus("c:3", AVAILABLE); // back: its keys return
    assertThat(owners(list, 400)).isEqualTo(before);

    list.update(List.of(), List.of("a:1")); // removed: the same
    Map<String, String> removed = owners(list, 400);
    before.forEach(
        (key, owner) -> {
          if (!owner.equals("a:1")) {
            assertThat(removed.get(key)).isEqualTo(owner);
          }
        });
  }

  @Test
  void hashRingRefusesABadOffsetHeaderBeforeWaiting() {
    transport.initialStatus("a:1", CONNECTING);
    AbstractPeerList list =
        started(t -> HashRingPeerList.builder(t).offsetHeader("X-Ring-Offset"), "a:1");
    RequestMeta bad =
        meta(Duration.ofSeconds(10)).toBuilder().headers(Headers.of("x-ring-offset", "-2")).build();
    CompletableFuture<PeerLease> f = list.choose(bad);
    assertThat(f).isCompletedExceptionally();
    YarpcException e = failure(f);
    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(e.getMessage()).contains("header x-ring-offset must be a ring offset", "\"-2\"");
  }

  private static Map<String, String> owners(AbstractPeerList list, int keys) throws Exception {
    Map<String, String> owners = new HashMap<>();
    for (int k = 0; k < keys; k++) {
      RequestMeta m =
          RequestMeta.builder().service("svc").procedure("p").shardKey("user-" + k).build();
      PeerLease lease = await(list.choose(m));
      owners.put("user-" + k, lease.peer().identifier());
      lease.finish(null);
    }
    return owners;
  }

  private static YarpcException failure(CompletableFuture<PeerLease> f) {
    Throwable t = catchThrowable(() -> f.get(10, TimeUnit.SECONDS));
    assertThat(t).isInstanceOf(ExecutionException.class).hasCauseInstanceOf(YarpcException.class);
    return (YarpcException) t.getCause();
  }
}
