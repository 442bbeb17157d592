package io.yarpc.peer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.RequestMeta;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
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

  @Test
  void returnsThePeerWhateverItsStatus() {
    SinglePeerChooser chooser = SinglePeerChooser.of(transport, "127.0.0.1:1234");
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
