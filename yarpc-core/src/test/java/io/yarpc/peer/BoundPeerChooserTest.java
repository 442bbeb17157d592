package io.yarpc.peer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.yarpc.errors.YarpcException;
import io.yarpc.transport.AbstractLifecycle;
import io.yarpc.transport.RequestMeta;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A list and its updater as one chooser: start and stop order, choices, introspection, wait reasons. */
@Timeout(30)
class BoundPeerChooserTest {
  private final FakePeerTransport transport = new FakePeerTransport();
  private final List<String> events = new CopyOnWriteArrayList<>();

  /** Adds its peers at start, as a static updater would; records its lifecycle in {@code events}. */
  private final class Adding extends AbstractLifecycle implements PeerListUpdater {
    private final PeerList list;
    private final List<String> peers;
    volatile String error;
    boolean failStart;

    Adding(PeerList list, String... peers) {
      this.list = list;
      this.peers = List.of(peers);
    }

    @Override
    protected void doStart() {
      events.add("updater started, list running: " + ((PeerChooser) list).isRunning());
      if (failStart) {
        throw new IllegalStateException("cannot start");
      }
      list.update(peers, List.of());
    }

    @Override
    protected void doStop() {
      events.add("updater stopped, list running: " + ((PeerChooser) list).isRunning());
    }

    @Override
    public UpdaterStatus status() {
      return new UpdaterStatus(
          "static", "the test", isRunning(), peers, Instant.EPOCH, error, error == null ? 0 : 1);
    }
  }

  private static RequestMeta meta() {
    return RequestMeta.builder().service("svc").procedure("proc").build();
  }

  @Test
  void startsTheListThenTheUpdaterAndStopsTheUpdaterFirst() throws Exception {
    RoundRobinPeerList list = RoundRobinPeerList.builder(transport).build();
    Adding updater = new Adding(list, "a:1", "b:2");
    BoundPeerChooser<RoundRobinPeerList> chooser = BoundPeerChooser.of(list, updater);
    assertThat(chooser.list()).isSameAs(list);
    assertThat(chooser.updater()).isSameAs(updater);

    chooser.start();
    assertThat(events).containsExactly("updater started, list running: true");
    assertThat(chooser.isRunning()).isTrue();
    PeerLease lease = chooser.choose(meta()).get();
    assertThat(lease.peer().identifier()).isEqualTo("a:1");
    lease.finish(null);
    assertThat(transport.retainCount("a:1")).isEqualTo(1);

    chooser.stop();
    assertThat(events).endsWith("updater stopped, list running: true");
    assertThat(list.isRunning()).isFalse();
    assertThat(updater.isRunning()).isFalse();
    assertThat(transport.outstandingRetains()).isZero();
  }

  @Test
  void anUpdaterThatFailsToStartStopsTheListAgain() {
    RoundRobinPeerList list = RoundRobinPeerList.builder(transport).peers(List.of("a:1")).build();
    Adding updater = new Adding(list);
    updater.failStart = true;
    BoundPeerChooser<RoundRobinPeerList> chooser = BoundPeerChooser.of(list, updater);
    assertThatThrownBy(chooser::start).hasMessage("cannot start");
    assertThat(list.isRunning()).isFalse();
    assertThat(transport.outstandingRetains()).isZero();
    assertThat(chooser.isRunning()).isFalse();
  }

  @Test
  void introspectionAndWaitReasonsTellTheUpdatersStatus() throws Exception {
    RoundRobinPeerList list = RoundRobinPeerList.builder(transport).build();
    Adding updater = new Adding(list);
    BoundPeerChooser<RoundRobinPeerList> chooser = BoundPeerChooser.of(list, updater);
    chooser.start();
    ChooserStatus status = chooser.introspect();
    assertThat(status.kind()).isEqualTo("round-robin");
    assertThat(status.peers()).isEmpty();
    assertThat(status.updater()).isEqualTo(updater.status());
    assertThat(list.introspect().updater()).as("a list alone has no updater").isNull();

    assertThat(chooser.waitReason()).isEqualTo(list.waitReason());
    updater.error = "SRV lookup of users.svc.test failed: NXDOMAIN";
    assertThat(chooser.waitReason())
        .isEqualTo(
            "\"round-robin\" peer list has no peers; the static updater of the test failed: SRV"
                + " lookup of users.svc.test failed: NXDOMAIN");
    assertThatThrownBy(() -> chooser.choose(meta()).get())
        .isInstanceOf(ExecutionException.class)
        .cause()
        .isInstanceOf(YarpcException.class);
    chooser.stop();
  }
}
