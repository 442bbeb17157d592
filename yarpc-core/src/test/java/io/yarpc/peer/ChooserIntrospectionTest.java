package io.yarpc.peer;

import static io.yarpc.peer.ConnectionStatus.AVAILABLE;
import static io.yarpc.peer.ConnectionStatus.UNAVAILABLE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.yarpc.transport.RequestMeta;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link PeerChooser#introspect()} of the provided choosers, and its default. */
@Timeout(30)
class ChooserIntrospectionTest {
  private final FakePeerTransport transport = new FakePeerTransport();

  private static RequestMeta meta() {
    return RequestMeta.builder().service("svc").procedure("proc").build();
  }

  @Test
  void roundRobinListsEveryPeerWithStatusReasonAndPendingLeases() throws Exception {
    RoundRobinPeerList list =
        RoundRobinPeerList.builder(transport).peers(List.of("a:1", "b:2")).build();
    assertThat(list.introspect().kind()).isEqualTo("round-robin");
    assertThat(list.introspect().peers())
        .containsExactly(
            new PeerStatus("a:1", UNAVAILABLE, "the peer list has not been started", 0),
            new PeerStatus("b:2", UNAVAILABLE, "the peer list has not been started", 0));

    transport.initialStatus("b:2", UNAVAILABLE);
    transport.peer("b:2").unavailableReason = "Connection refused: /127.0.0.1:2";
    list.start();
    PeerLease first = list.choose(meta()).get();
    PeerLease second = list.choose(meta()).get();
    ChooserStatus running = list.introspect();
    assertThat(running.peers())
        .containsExactly(
            new PeerStatus("a:1", AVAILABLE, null, 2),
            new PeerStatus("b:2", UNAVAILABLE, "Connection refused: /127.0.0.1:2", 0));
    first.finish(null);
    assertThat(list.introspect().peers().get(0).pendingRequests()).isEqualTo(1);
    second.finish(null);

    list.update(List.of("c:3"), List.of("a:1"));
    assertThat(list.introspect().peers())
        .extracting(PeerStatus::identifier)
        .containsExactly("b:2", "c:3");

    list.stop();
    assertThat(list.introspect().peers())
        .allSatisfy(
            p -> {
              assertThat(p.status()).isEqualTo(UNAVAILABLE);
              assertThat(p.unavailableReason()).isEqualTo("the peer list has been stopped");
            });
    // a snapshot does not follow the list
    assertThat(running.peers()).hasSize(2);
    assertThatThrownBy(() -> running.peers().clear())
        .isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void singleChooserShowsItsPeerAndPendingLeases() throws Exception {
    SinglePeerChooser chooser = SinglePeerChooser.of(transport, "h:1");
    assertThat(chooser.introspect())
        .isEqualTo(
            new ChooserStatus(
                "single",
                List.of(
                    new PeerStatus("h:1", UNAVAILABLE, "the chooser has not been started", 0))));
    chooser.start();
    PeerLease lease = chooser.choose(meta()).get();
    assertThat(chooser.introspect().peers())
        .containsExactly(new PeerStatus("h:1", AVAILABLE, null, 1));
    lease.finish(null);

    transport.peer("h:1").unavailableReason = "Connection refused";
    transport.setStatus("h:1", UNAVAILABLE);
    assertThat(chooser.introspect().peers())
        .containsExactly(new PeerStatus("h:1", UNAVAILABLE, "Connection refused", 0));
    chooser.stop();
    assertThat(chooser.introspect().peers().get(0).unavailableReason())
        .isEqualTo("the chooser has been stopped");
  }

  @Test
  void defaultNamesTheChooserByItsClassAndListsNoPeers() {
    PeerChooser custom = new CustomChooser();
    assertThat(custom.introspect()).isEqualTo(new ChooserStatus("CustomChooser", List.of()));
    PeerChooser anonymous =
        new CustomChooser() {
          @Override
          public String toString() {
            return "anonymous";
          }
        };
    assertThat(anonymous.introspect().kind()).isEqualTo(anonymous.getClass().getName());
  }

  @Test
  void peerStatusChecksItsArguments() {
    assertThatThrownBy(() -> new PeerStatus("a", AVAILABLE, null, -1))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new PeerStatus(null, AVAILABLE, null, 0))
        .isInstanceOf(NullPointerException.class);
    FakePeerTransport.FakePeer p = transport.peer("x:1");
    p.unavailableReason = "stale reason";
    assertThat(PeerStatus.of(p, 3))
        .as("an available peer's stale reason is not shown")
        .isEqualTo(new PeerStatus("x:1", AVAILABLE, null, 3));
  }

  private static class CustomChooser implements PeerChooser {
    @Override
    public CompletableFuture<PeerLease> choose(RequestMeta meta) {
      return new CompletableFuture<>();
    }

    @Override
    public void start() {}

    @Override
    public void stop() {}

    @Override
    public boolean isRunning() {
      return true;
    }
  }
}
