package io.yarpc.peer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

class PeerRegistryTest {
  private static final class TestPeer extends AbstractPeer {
    final AtomicInteger closed = new AtomicInteger();
    volatile ConnectionStatus status = ConnectionStatus.CONNECTING;

    TestPeer(String identifier) {
      super(identifier);
    }

    @Override
    public ConnectionStatus status() {
      return status;
    }

    void become(ConnectionStatus next) {
      status = next;
      notifySubscribers();
    }

    @Override
    protected void close() {
      closed.incrementAndGet();
    }

    /** Begins a call: runs {@code begin} unless the peer was released. */
    <T> T begin(Supplier<T> begin) {
      return beginCall(begin);
    }
  }

  private final List<TestPeer> started = new ArrayList<>();
  private final PeerRegistry<TestPeer> registry = new PeerRegistry<>(TestPeer::new, started::add);

  @Test
  void onePeerPerIdentifierStartedOnFirstRetainClosedOnLastRelease() {
    PeerSubscriber a = p -> {};
    PeerSubscriber b = p -> {};
    TestPeer first = registry.retain("h:1", a);
    assertThat(registry.retain("h:1", b)).isSameAs(first);
    assertThat(registry.retain("h:1", a)).isSameAs(first);
    assertThat(started).containsExactly(first);
    assertThat(registry.peers()).containsExactly(first);

    registry.release("h:1", a);
    registry.release("h:1", b);
    assertThat(first.closed).hasValue(0);
    assertThat(first.isRetained()).isTrue();
    registry.release("h:1", a);
    assertThat(first.closed).hasValue(1);
    assertThat(registry.get("h:1")).isNull();
    assertThat(registry.peers()).isEmpty();

    TestPeer again = registry.retain("h:1", a);
    assertThat(again).isNotSameAs(first);
    assertThat(started).containsExactly(first, again);
  }

  @Test
  void releasingWhatWasNotRetainedFails() {
    assertThatThrownBy(() -> registry.release("h:1", p -> {}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("h:1");
    registry.retain("h:1", p -> {});
    assertThatThrownBy(() -> registry.release("h:1", p -> {}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not retained by");
  }

  @Test
  void statusChangesReachEverySubscriberEvenWhenOneThrows() {
    List<String> seen = new ArrayList<>();
    TestPeer peer =
        registry.retain(
            "h:1",
            p -> {
              throw new IllegalStateException("bad subscriber");
            });
    registry.retain("h:1", p -> seen.add(p.identifier() + " " + p.status()));
    peer.become(ConnectionStatus.AVAILABLE);
    assertThat(seen).containsExactly("h:1 AVAILABLE");
  }

  @Test
  void closeAllClosesEveryPeerOnce() {
    TestPeer a = registry.retain("a:1", p -> {});
    TestPeer b = registry.retain("b:1", p -> {});
    registry.closeAll();
    assertThat(a.closed).hasValue(1);
    assertThat(b.closed).hasValue(1);
    assertThat(registry.peers()).isEmpty();
  }

  @Test
  void aCallBeginsUntilThePeerIsReleasedThenIsRefusedWithTheReleasedError() {
    PeerSubscriber a = p -> {};
    TestPeer peer = registry.retain("h:1", a);
    assertThat(peer.begin(() -> "begun")).isEqualTo("begun");
    assertThat(peer.isReleased()).isFalse();

    registry.release("h:1", a);

    assertThat(peer.isReleased()).isTrue();
    AtomicInteger ran = new AtomicInteger();
    assertThatThrownBy(() -> peer.begin(ran::incrementAndGet))
        .isInstanceOfSatisfying(
            YarpcException.class,
            e -> {
              assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
              assertThat(e.unprocessed()).as("nothing was sent").isTrue();
              assertThat(e.getMessage()).isEqualTo("peer h:1 was released");
            });
    assertThat(ran).as("a refused call does not begin").hasValue(0);
    assertThat(peer.closed).as("refusals do not close it again").hasValue(1);
  }

  @Test
  void aReleaseWhileACallBeginsClosesThePeerOnlyOnceTheCallHasBegun() {
    PeerSubscriber a = p -> {};
    TestPeer peer = registry.retain("h:1", a);
    int closedDuringBegin =
        peer.begin(
            () -> {
              registry.release("h:1", a); // the last holder lets go while the call begins
              assertThatThrownBy(() -> peer.begin(() -> "another"))
                  .as("a call beginning after the release")
                  .isInstanceOf(YarpcException.class);
              return peer.closed.get();
            });
    assertThat(closedDuringBegin).as("not closed under a beginning call").isZero();
    assertThat(peer.closed).as("closed once the call has begun").hasValue(1);
  }

  @Test
  void closeAllReleasesEveryPeer() {
    TestPeer a = registry.retain("a:1", p -> {});
    registry.closeAll();
    assertThat(a.isReleased()).isTrue();
    assertThatThrownBy(() -> a.begin(() -> "x")).hasMessage("peer a:1 was released");
  }

  @Test
  void aFactoryMayRefuse() {
    PeerRegistry<TestPeer> stopped =
        new PeerRegistry<>(
            id -> {
              throw new IllegalStateException("transport was stopped");
            },
            p -> {});
    assertThatThrownBy(() -> stopped.retain("h:1", p -> {})).hasMessage("transport was stopped");
    assertThat(stopped.peers()).isEmpty();
  }
}
