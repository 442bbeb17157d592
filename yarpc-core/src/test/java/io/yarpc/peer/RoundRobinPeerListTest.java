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
import io.yarpc.transport.RequestMeta;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
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
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class RoundRobinPeerListTest {
  private static final String NO_PEERS_TIMED_OUT =
      "\"round-robin\" peer list has no peers, waited for peers to be added but timed out "
          + "(fail-fast is not enabled): ";
  private static final String NONE_RESPONSIVE_TIMED_OUT =
      "\"round-robin\" peer list has 3 peers but none are responsive, timed out waiting for a connection "
          + "to open (fail-fast is not enabled): ";

  private final FakePeerTransport transport = new FakePeerTransport();
  private final List<RoundRobinPeerList> lists = new ArrayList<>();

  @AfterEach
  void stopListsAndCheckBalance() {
    lists.forEach(RoundRobinPeerList::stop);
    assertThat(transport.outstandingRetains()).as("retains not released").isZero();
    assertThat(transport.errors()).isEmpty();
  }

  private RoundRobinPeerList.Builder builder(String... ids) {
    return RoundRobinPeerList.builder(transport).peers(List.of(ids));
  }

  private RoundRobinPeerList started(RoundRobinPeerList.Builder builder) {
    RoundRobinPeerList list = builder.build();
    lists.add(list);
    list.start();
    return list;
  }

  private static RequestMeta meta() {
    return RequestMeta.builder().service("svc").procedure("proc").build();
  }

  private static RequestMeta meta(Duration timeout) {
    return RequestMeta.builder()
        .service("svc")
        .procedure("proc")
        .deadline(Deadline.after(timeout))
        .build();
  }

  private static String chooseNow(RoundRobinPeerList list) {
    CompletableFuture<PeerLease> f = list.choose(meta());
    assertThat(f).isDone();
    return f.join().peer().identifier();
  }

  private static YarpcException failure(CompletableFuture<PeerLease> f) {
    Throwable t = catchThrowable(() -> f.get(10, TimeUnit.SECONDS));
    assertThat(t).isInstanceOf(ExecutionException.class).hasCauseInstanceOf(YarpcException.class);
    return (YarpcException) t.getCause();
  }

  private static PeerLease await(CompletableFuture<PeerLease> f) throws Exception {
    return f.get(10, TimeUnit.SECONDS);
  }

  // --- order and availability
  // ---------------------------------------------------------------------

  @Test
  void choosesThreePeersInRoundRobinOrder() {
    RoundRobinPeerList list = started(builder("a:1", "b:2", "c:3"));
    List<String> chosen = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      chosen.add(chooseNow(list));
    }
    assertThat(chosen).containsExactly("a:1", "b:2", "c:3", "a:1", "b:2", "c:3", "a:1");
    assertThat(list.availablePeers()).containsExactly("b:2", "c:3", "a:1");
  }

  @Test
  void skipsPeersThatAreNotAvailable() {
    transport.initialStatus("b:2", CONNECTING);
    RoundRobinPeerList list = started(builder("a:1", "b:2", "c:3"));
    assertThat(list.unavailablePeers()).containsExactly("b:2");

    List<String> chosen = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      chosen.add(chooseNow(list));
    }
    assertThat(chosen).containsExactly("a:1", "c:3", "a:1", "c:3");

    transport.setStatus("a:1", UNAVAILABLE);
    assertThat(List.of(chooseNow(list), chooseNow(list), chooseNow(list))).containsOnly("c:3");

    transport.setStatus("b:2", AVAILABLE);
    transport.setStatus("a:1", AVAILABLE);
    List<String> turn = List.of(chooseNow(list), chooseNow(list), chooseNow(list));
    assertThat(turn).containsExactlyInAnyOrder("a:1", "b:2", "c:3");
  }

  @Test
  void peerBecomingAvailableIsChosenAfterEveryPeerAlreadyInTheRing() {
    transport.initialStatus("c:3", UNAVAILABLE);
    RoundRobinPeerList list = started(builder("a:1", "b:2", "c:3"));
    assertThat(chooseNow(list)).isEqualTo("a:1");
    transport.setStatus("c:3", AVAILABLE); // inserted just before the cursor, as in yarpc-go's ring
    assertThat(list.availablePeers()).containsExactly("b:2", "a:1", "c:3");
    assertThat(List.of(chooseNow(list), chooseNow(list), chooseNow(list), chooseNow(list)))
        .containsExactly("b:2", "a:1", "c:3", "b:2");
  }

  // --- waiting
  // ------------------------------------------------------------------------------------

  @Test
  void waitingChooseCompletesWhenAPeerBecomesAvailable() throws Exception {
    transport.initialStatus("a:1", CONNECTING);
    transport.initialStatus("b:2", CONNECTING);
    RoundRobinPeerList list = started(builder("a:1", "b:2"));

    CompletableFuture<PeerLease> first = list.choose(meta(Duration.ofSeconds(10)));
    CompletableFuture<PeerLease> second = list.choose(meta(Duration.ofSeconds(10)));
    assertThat(first).isNotDone();
    assertThat(second).isNotDone();

    transport.setStatus("b:2", AVAILABLE);

    assertThat(await(first).peer().identifier()).isEqualTo("b:2");
    assertThat(await(second).peer().identifier()).isEqualTo("b:2");
    assertThat(list.pendingRequests("b:2")).isEqualTo(2);
  }

  @Test
  void waitingChooseCompletesWhenAnAvailablePeerIsAdded() throws Exception {
    RoundRobinPeerList list = started(RoundRobinPeerList.builder(transport));
    CompletableFuture<PeerLease> f = list.choose(meta()); // no deadline: default timeout (500 ms)
    assertThat(f).isNotDone();

    list.update(List.of("a:1"), List.of());

    assertThat(await(f).peer().identifier()).isEqualTo("a:1");
  }

  @Test
  void timesOutWithUnavailableWhenTheListIsEmpty() {
    RoundRobinPeerList list = started(RoundRobinPeerList.builder(transport));

    YarpcException e = failure(list.choose(meta(Duration.ofMillis(50))));

    assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(e.getMessage()).startsWith(NO_PEERS_TIMED_OUT).matches(".*: \\d+(ms|(\\.\\d+)?s)$");
  }

  @Test
  void timesOutWithUnavailableWhenNoPeerIsResponsive() {
    transport.initialStatus("a:1", CONNECTING);
    transport.initialStatus("b:2", UNAVAILABLE);
    transport.initialStatus("c:3", CONNECTING);
    RoundRobinPeerList list = started(builder("a:1", "b:2", "c:3"));

    YarpcException e = failure(list.choose(meta(Duration.ofMillis(50))));

    assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(e.getMessage()).startsWith(NONE_RESPONSIVE_TIMED_OUT);
    assertThat(list.pendingRequests("a:1")).isZero();
  }

  @Test
  void usesTheDefaultChooseTimeoutWhenTheCallHasNoDeadline() {
    transport.initialStatus("a:1", CONNECTING);
    RoundRobinPeerList list = started(builder("a:1").defaultChooseTimeout(Duration.ofMillis(50)));

    YarpcException e = failure(list.choose(meta()));

    assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(e.getMessage())
        .startsWith(
            "\"round-robin\" peer list has 1 peer but it is not responsive, "
                + "timed out waiting for a connection to open (fail-fast is not enabled): ");
  }

  @Test
  void anExpiredDeadlineFailsAtOnce() {
    RoundRobinPeerList list = started(RoundRobinPeerList.builder(transport));
    CompletableFuture<PeerLease> f = list.choose(meta(Duration.ofMillis(-1)));
    assertThat(f).isCompletedExceptionally();
    assertThat(failure(f).getMessage()).isEqualTo(NO_PEERS_TIMED_OUT + "0s");
  }

  @Test
  void cancellingAWaitingChooseAbandonsIt() throws Exception {
    transport.initialStatus("a:1", CONNECTING);
    RoundRobinPeerList list = started(builder("a:1"));
    CompletableFuture<PeerLease> cancelled = list.choose(meta(Duration.ofSeconds(10)));
    CompletableFuture<PeerLease> waiting = list.choose(meta(Duration.ofSeconds(10)));
    cancelled.cancel(false);

    transport.setStatus("a:1", AVAILABLE);

    assertThat(await(waiting).peer().identifier()).isEqualTo("a:1");
    assertThat(list.pendingRequests("a:1")).isEqualTo(1);
  }

  @Test
  void stopFailsWaitingChooses() {
    transport.initialStatus("a:1", CONNECTING);
    RoundRobinPeerList list = started(builder("a:1"));
    CompletableFuture<PeerLease> f = list.choose(meta(Duration.ofSeconds(10)));

    list.stop();

    YarpcException e = failure(f);
    assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(e.getMessage())
        .isEqualTo("\"round-robin\" peer list was stopped while waiting for a peer");
  }

  // --- fail-fast
  // ----------------------------------------------------------------------------------

  @Test
  void failFastFailsAtOnceWithoutWaiting() {
    RoundRobinPeerList empty = started(RoundRobinPeerList.builder(transport).failFast(true));
    CompletableFuture<PeerLease> f = empty.choose(meta(Duration.ofSeconds(10)));
    assertThat(f).isCompletedExceptionally();
    YarpcException e = failure(f);
    assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(e.getMessage())
        .isEqualTo(
            "\"round-robin\" peer list has no peers, did not wait for peers to be added (fail-fast is enabled)");

    transport.initialStatus("a:1", CONNECTING);
    transport.initialStatus("b:2", CONNECTING);
    RoundRobinPeerList connecting = started(builder("a:1", "b:2").failFast(true));
    CompletableFuture<PeerLease> g = connecting.choose(meta(Duration.ofSeconds(10)));
    assertThat(g).isCompletedExceptionally();
    assertThat(failure(g).getMessage())
        .isEqualTo(
            "\"round-robin\" peer list has 2 peers but none are "
                + "responsive, did not wait for a connection to open (fail-fast is enabled)");

    transport.setStatus("a:1", AVAILABLE);
    assertThat(chooseNow(connecting)).isEqualTo("a:1");
  }

  // --- updates
  // ------------------------------------------------------------------------------------

  @Test
  void updateAddsAndRemovesPeersWhileRunning() {
    RoundRobinPeerList list = started(builder("a:1", "b:2"));

    list.update(List.of("c:3"), List.of("a:1"));

    assertThat(list.peerIdentifiers()).containsExactly("b:2", "c:3");
    assertThat(transport.releaseCount("a:1")).isEqualTo(1);
    assertThat(transport.retainCount("c:3")).isEqualTo(1);
    assertThat(List.of(chooseNow(list), chooseNow(list), chooseNow(list), chooseNow(list)))
        .containsExactly("b:2", "c:3", "b:2", "c:3");
  }

  @Test
  void duplicateAddAndAbsentRemoveAreReportedButTheRestIsApplied() {
    RoundRobinPeerList list = started(builder("a:1", "b:2"));

    Throwable t =
        catchThrowable(
            () -> list.update(List.of("a:1", "c:3", "d:4", "c:3"), List.of("x:9", "b:2")));

    assertThat(t)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("cannot add peers already in the list: [a:1, c:3]")
        .hasMessageContaining("cannot remove peers not in the list: [x:9]");
    assertThat(list.peerIdentifiers()).containsExactly("a:1", "c:3", "d:4");
    assertThat(transport.retainCount("a:1")).isEqualTo(1);
    assertThat(transport.retainCount("c:3")).isEqualTo(1);
    assertThat(transport.releaseCount("b:2")).isEqualTo(1);
    assertThat(transport.releaseCount("x:9")).isZero();
  }

  @Test
  void updateBeforeStartOnlyRecordsAndStartRetains() {
    RoundRobinPeerList list = builder("a:1").build();
    lists.add(list);

    list.update(List.of("b:2"), List.of());
    assertThat(transport.retainCount("b:2")).isZero();
    assertThat(list.unavailablePeers()).containsExactly("a:1", "b:2");

    list.start();
    assertThat(transport.retainCount("a:1")).isEqualTo(1);
    assertThat(transport.retainCount("b:2")).isEqualTo(1);
    assertThat(List.of(chooseNow(list), chooseNow(list))).containsExactly("a:1", "b:2");
  }

  @Test
  void removedPeerIgnoresLateNotificationsAndCanBeAddedAgain() {
    RoundRobinPeerList list = started(builder("a:1", "b:2"));
    list.update(List.of(), List.of("a:1"));
    transport.setStatus("a:1", AVAILABLE); // nobody subscribed any more
    assertThat(List.of(chooseNow(list), chooseNow(list))).containsOnly("b:2");

    list.update(List.of("a:1"), List.of());
    assertThat(transport.retainCount("a:1")).isEqualTo(2);
    assertThat(List.of(chooseNow(list), chooseNow(list))).containsExactlyInAnyOrder("a:1", "b:2");
  }

  @Test
  void builderRejectsDuplicatePeers() {
    assertThatThrownBy(() -> builder("a:1", "a:1").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("a:1");
  }

  // --- pending counts
  // -----------------------------------------------------------------------------

  @Test
  void countsPendingRequestsAndFinishesEachLeaseOnce() {
    RoundRobinPeerList list = started(builder("a:1", "b:2"));
    PeerLease a1 = list.choose(meta()).join();
    PeerLease b1 = list.choose(meta()).join();
    PeerLease a2 = list.choose(meta()).join();
    assertThat(list.pendingRequests("a:1")).isEqualTo(2);
    assertThat(list.pendingRequests("b:2")).isEqualTo(1);

    a1.finish(null);
    a1.finish(null);
    a1.finish(new RuntimeException("late"));
    assertThat(list.pendingRequests("a:1")).isEqualTo(1);

    b1.finish(new RuntimeException("call failed"));
    a2.finish(null);
    assertThat(list.pendingRequests("a:1")).isZero();
    assertThat(list.pendingRequests("b:2")).isZero();
    assertThat(list.pendingRequests("unknown:0")).isZero();
  }

  // --- lifecycle
  // ----------------------------------------------------------------------------------

  @Test
  void chooseBeforeStartAndAfterStopFailsUnavailable() {
    RoundRobinPeerList list = builder("a:1").build();
    lists.add(list);
    YarpcException before = failure(list.choose(meta()));
    assertThat(before.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(before.getMessage()).isEqualTo("\"round-robin\" peer list has not been started");

    list.start();
    list.stop();
    YarpcException after = failure(list.choose(meta()));
    assertThat(after.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(after.getMessage()).isEqualTo("\"round-robin\" peer list has been stopped");
  }

  @Test
  void startAndStopAreIdempotentAndRetainsAreBalanced() {
    RoundRobinPeerList list = builder("a:1", "b:2", "c:3").build();
    list.stop(); // before start: nothing retained, nothing released
    assertThat(transport.releaseCount("a:1")).isZero();

    RoundRobinPeerList other = builder("a:1", "b:2", "c:3").build();
    other.start();
    other.start();
    assertThat(other.isRunning()).isTrue();
    other.update(List.of("d:4"), List.of("c:3"));
    other.stop();
    other.stop();
    assertThat(other.isRunning()).isFalse();

    for (String id : List.of("a:1", "b:2", "c:3", "d:4")) {
      assertThat(transport.retainCount(id)).as("retains of %s", id).isEqualTo(1);
      assertThat(transport.releaseCount(id)).as("releases of %s", id).isEqualTo(1);
    }
    assertThat(transport.outstandingRetains()).isZero();
    assertThat(other.availablePeers()).isEmpty();

    other.update(List.of("e:5"), List.of()); // after stop: recorded only
    assertThat(transport.retainCount("e:5")).isZero();
    assertThatThrownBy(other::start).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void aFailedStartReleasesWhatWasRetained() {
    PeerTransport failing =
        new PeerTransport() {
          @Override
          public Peer retainPeer(String identifier, PeerSubscriber subscriber) {
            if (identifier.equals("bad:0")) {
              throw new IllegalStateException("cannot retain " + identifier);
            }
            return transport.retainPeer(identifier, subscriber);
          }

          @Override
          public void releasePeer(String identifier, PeerSubscriber subscriber) {
            transport.releasePeer(identifier, subscriber);
          }
        };
    RoundRobinPeerList list =
        RoundRobinPeerList.builder(failing).peers(List.of("a:1", "bad:0", "c:3")).build();

    assertThatThrownBy(list::start).hasMessage("cannot retain bad:0");

    assertThat(list.isRunning()).isFalse();
    assertThat(transport.retainCount("a:1")).isEqualTo(1);
    assertThat(transport.releaseCount("a:1")).isEqualTo(1);
    assertThat(transport.retainCount("c:3")).isZero();
  }

  // --- concurrency
  // --------------------------------------------------------------------------------

  @Test
  void concurrentChoosesAreSpreadEvenly() throws Exception {
    RoundRobinPeerList list = started(builder("a:1", "b:2", "c:3", "d:4"));
    int threads = 8;
    int perThread = 2_000;
    Map<String, LongAdder> counts = new ConcurrentHashMap<>();
    CountDownLatch go = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        done.add(
            pool.submit(
                () -> {
                  go.await();
                  for (int i = 0; i < perThread; i++) {
                    PeerLease lease = list.choose(meta()).join();
                    counts
                        .computeIfAbsent(lease.peer().identifier(), k -> new LongAdder())
                        .increment();
                    lease.finish(null);
                  }
                  return null;
                }));
      }
      go.countDown();
      for (Future<?> f : done) {
        f.get(20, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }

    assertThat(counts).containsOnlyKeys("a:1", "b:2", "c:3", "d:4");
    List<Long> values = new ArrayList<>();
    counts.values().forEach(c -> values.add(c.sum()));
    assertThat(values.stream().mapToLong(Long::longValue).sum())
        .isEqualTo((long) threads * perThread);
    assertThat(Collections.max(values) - Collections.min(values)).isLessThanOrEqualTo(1);
    for (String id : counts.keySet()) {
      assertThat(list.pendingRequests(id)).isZero();
    }
  }

  @Test
  void concurrentChoosesUpdatesAndStatusChangesStayConsistent() throws Exception {
    List<String> ids = List.of("a:1", "b:2", "c:3", "d:4");
    RoundRobinPeerList list =
        started(RoundRobinPeerList.builder(transport).peers(ids.subList(0, 2)));
    int threads = 6;
    int perThread = 500;
    AtomicInteger failures = new AtomicInteger();
    AtomicInteger successes = new AtomicInteger();
    Map<String, Boolean> unexpected = new ConcurrentHashMap<>();
    AtomicBoolean choosersDone = new AtomicBoolean();
    CountDownLatch go = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads + 2);
    try {
      List<Future<?>> choosers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        choosers.add(
            pool.submit(
                () -> {
                  go.await();
                  ThreadLocalRandom random = ThreadLocalRandom.current();
                  ConnectionStatus[] statuses =
                      ConnectionStatus.values(); // available a third of the time
                  for (int i = 0; i < perThread; i++) {
                    if (i % 4
                        == 0) { // choosers flap statuses too, so waits and serves interleave with
                      // chooses
                      transport.setStatus(
                          ids.get(random.nextInt(ids.size())),
                          statuses[random.nextInt(statuses.length)]);
                    }
                    try {
                      PeerLease lease =
                          list.choose(meta(Duration.ofMillis(10))).get(10, TimeUnit.SECONDS);
                      successes.incrementAndGet();
                      lease.finish(null);
                      if (i % 3 == 0) {
                        lease.finish(null);
                      }
                    } catch (ExecutionException e) {
                      if (!(e.getCause() instanceof YarpcException)
                          || ((YarpcException) e.getCause()).code() != Code.UNAVAILABLE) {
                        unexpected.put(String.valueOf(e.getCause()), true);
                      }
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
                while (!choosersDone.get()) {
                  ConnectionStatus[] statuses =
                      ConnectionStatus.values(); // available a third of the time
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
                while (!choosersDone.get()) {
                  String id = ids.get(random.nextInt(ids.size()));
                  try {
                    if (list.peerIdentifiers().contains(id)) {
                      list.update(List.of(), List.of(id));
                    } else {
                      list.update(List.of(id), List.of());
                    }
                  } catch (IllegalArgumentException e) {
                    unexpected.put(e.getMessage(), true); // only this thread updates: cannot happen
                  }
                  Thread.sleep(0, 100_000);
                }
                return null;
              });
      go.countDown();
      try {
        for (Future<?> f : choosers) {
          f.get(25, TimeUnit.SECONDS);
        }
      } finally {
        choosersDone.set(true);
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
      assertThat(list.pendingRequests(id)).as("pending of %s", id).isZero();
    }
    // After the storm every peer in the list is available and in the ring, and only those.
    assertThat(list.availablePeers()).containsExactlyInAnyOrderElementsOf(list.peerIdentifiers());
    assertThat(list.unavailablePeers()).isEmpty();
    list.stop();
    assertThat(transport.outstandingRetains()).isZero();
    assertThat(transport.errors()).isEmpty();
  }
}
