package io.yarpc.peer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.RequestMeta;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class SinglePeerChooserTest {
  private static final RequestMeta META =
      RequestMeta.builder().service("svc").procedure("p").build();

  private final FakePeerTransport transport = new FakePeerTransport(ConnectionStatus.UNAVAILABLE);

  private static YarpcException failure(CompletableFuture<PeerLease> f) {
    assertThat(f).isCompletedExceptionally();
    Throwable t = org.assertj.core.api.Assertions.catchThrowable(f::join);
    assertThat(t).isInstanceOf(CompletionException.class).hasCauseInstanceOf(YarpcException.class);
    return (YarpcException) t.getCause();
  }

  private static RequestMeta metaWithin(Duration timeout) {
    return META.toBuilder().deadline(Deadline.after(timeout)).build();
  }

  @Test
  void anAvailablePeerIsReturnedAtOnce() {
    transport.initialStatus("a:1", ConnectionStatus.AVAILABLE);
    SinglePeerChooser chooser = SinglePeerChooser.of(transport, "a:1");
    chooser.start();
    CompletableFuture<PeerLease> f = chooser.choose(metaWithin(Duration.ofSeconds(5)));
    assertThat(f).isCompleted();
    assertThat(chooser.waitReason()).isNull();
    f.join().finish(null);
    chooser.stop();
  }

  @Test
  void aChoiceWaitsUntilThePeerIsAvailableAndNudgesItMeanwhile() throws Exception {
    SinglePeerChooser chooser = SinglePeerChooser.of(transport, "a:1");
    chooser.start();
    FakePeerTransport.FakePeer peer = transport.peer("a:1");
    peer.unavailableReason = "Connection refused";

    CompletableFuture<PeerLease> f = chooser.choose(metaWithin(Duration.ofSeconds(10)));
    assertThat(f).isNotDone();
    assertThat(chooser.waitReason()).isEqualTo("peer a:1 is unreachable: Connection refused");
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (peer.connectNowCalls.get() < 2 && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertThat(peer.connectNowCalls.get()).as("connectNow while the call waits").isGreaterThan(1);

    transport.setStatus("a:1", ConnectionStatus.AVAILABLE);
    PeerLease lease = f.get(10, TimeUnit.SECONDS);
    assertThat(lease.peer()).isSameAs(peer);
    assertThat(chooser.pendingRequests()).isEqualTo(1);
    lease.finish(null);
    // nobody waits any more: the nudging stops
    Thread.sleep(300);
    int calls = peer.connectNowCalls.get();
    Thread.sleep(300);
    assertThat(peer.connectNowCalls.get()).isEqualTo(calls);
    chooser.stop();
  }

  @Test
  void aWaitThatTimesOutNamesThePeerAndWhyItIsUnreachable() {
    SinglePeerChooser chooser = SinglePeerChooser.of(transport, "a:1");
    chooser.start();
    transport.peer("a:1").unavailableReason = "Connection refused: /127.0.0.1:1";
    YarpcException e = failureAfterWaiting(chooser.choose(metaWithin(Duration.ofMillis(50))));
    assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(e.getMessage())
        .startsWith("peer a:1 is unreachable: Connection refused: /127.0.0.1:1 (waited ");
    assertThat(chooser.pendingRequests()).isZero();
    chooser.stop();
  }

  @Test
  void stopFailsWaitingChoicesAndCancellingAbandonsTheWait() {
    SinglePeerChooser chooser = SinglePeerChooser.of(transport, "a:1");
    chooser.start();
    CompletableFuture<PeerLease> cancelled = chooser.choose(metaWithin(Duration.ofSeconds(10)));
    cancelled.cancel(false);
    CompletableFuture<PeerLease> waiting = chooser.choose(metaWithin(Duration.ofSeconds(10)));
    chooser.stop();
    YarpcException e = failure(waiting);
    assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(e.getMessage())
        .isEqualTo("single peer chooser for \"a:1\" was stopped while waiting for the peer");
    assertThat(chooser.pendingRequests()).isZero();
    assertThat(transport.outstandingRetains()).isZero();
  }

  private static YarpcException failureAfterWaiting(CompletableFuture<PeerLease> f) {
    Throwable t = org.assertj.core.api.Assertions.catchThrowable(() -> f.get(10, TimeUnit.SECONDS));
    assertThat(t).isInstanceOf(ExecutionException.class).hasCauseInstanceOf(YarpcException.class);
    return (YarpcException) t.getCause();
  }

  @Test
  void aFailFastChooserReturnsThePeerWhateverItsStatus() {
    SinglePeerChooser chooser =
        SinglePeerChooser.builder(transport, "127.0.0.1:1234").failFast(true).build();
    chooser.start();

    PeerLease first = chooser.choose(META).join(); // UNAVAILABLE, still returned at once
    transport.setStatus("127.0.0.1:1234", ConnectionStatus.CONNECTING);
    PeerLease second = chooser.choose(META).join();

    assertThat(first.peer().identifier()).isEqualTo("127.0.0.1:1234");
    assertThat(second.peer()).isSameAs(first.peer());
    assertThat(chooser.identifier()).isEqualTo("127.0.0.1:1234");
    chooser.stop();
  }

  @Test
  void chooseBeforeStartAndAfterStopFailsUnavailable() {
    SinglePeerChooser chooser = SinglePeerChooser.of(transport, "a:1");

    YarpcException before = failure(chooser.choose(META));
    assertThat(before.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(before.getMessage())
        .isEqualTo("single peer chooser for \"a:1\" has not been started");

    chooser.start();
    chooser.stop();
    YarpcException after = failure(chooser.choose(META));
    assertThat(after.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(after.getMessage()).isEqualTo("single peer chooser for \"a:1\" has been stopped");
  }

  @Test
  void startAndStopAreIdempotentAndBalanced() {
    SinglePeerChooser chooser = SinglePeerChooser.of(transport, "a:1");
    chooser.stop(); // before start: nothing to release
    assertThat(transport.releaseCount("a:1")).isZero();

    SinglePeerChooser other = SinglePeerChooser.of(transport, "a:1");
    other.start();
    other.start();
    assertThat(other.isRunning()).isTrue();
    assertThat(transport.retainCount("a:1")).isEqualTo(1);
    other.stop();
    other.stop();
    assertThat(other.isRunning()).isFalse();
    assertThat(transport.releaseCount("a:1")).isEqualTo(1);
    assertThat(transport.outstandingRetains()).isZero();
    assertThat(transport.errors()).isEmpty();
    assertThatThrownBy(other::start).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void twoChoosersOfOneAddressRetainWithDistinctSubscribers() {
    SinglePeerChooser a = SinglePeerChooser.of(transport, "a:1");
    SinglePeerChooser b = SinglePeerChooser.of(transport, "a:1");
    a.start();
    b.start();
    a.stop();
    b.stop();
    assertThat(transport.retainCount("a:1")).isEqualTo(2);
    assertThat(transport.outstandingRetains()).isZero();
    assertThat(transport.errors()).isEmpty();
  }

  @Test
  void countsPendingRequestsAndIgnoresSecondFinish() {
    transport.initialStatus("a:1", ConnectionStatus.AVAILABLE);
    SinglePeerChooser chooser = SinglePeerChooser.of(transport, "a:1");
    chooser.start();
    PeerLease one = chooser.choose(META).join();
    PeerLease two = chooser.choose(META).join();
    assertThat(chooser.pendingRequests()).isEqualTo(2);

    one.finish(null);
    one.finish(new RuntimeException("again"));
    assertThat(chooser.pendingRequests()).isEqualTo(1);
    two.finish(new RuntimeException("failed call"));
    assertThat(chooser.pendingRequests()).isZero();
    chooser.stop();
  }
}
