package io.yarpc.discovery;

import static io.yarpc.discovery.Dnsmasq.host;
import static io.yarpc.discovery.Dnsmasq.srv;
import static io.yarpc.discovery.Fixtures.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.Dispatcher;
import io.yarpc.discovery.DnsPeerListUpdater.RecordType;
import io.yarpc.discovery.Fixtures.Callers;
import io.yarpc.discovery.Fixtures.CountingTransport;
import io.yarpc.discovery.Fixtures.RecordingList;
import io.yarpc.discovery.Fixtures.Server;
import io.yarpc.peer.BoundPeerChooser;
import io.yarpc.peer.ChooserStatus;
import io.yarpc.peer.UpdaterStatus;
import io.yarpc.transport.http.HttpTransport;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The DNS updater against a real DNS server (dnsmasq) and real HTTP servers: SRV and A records followed
 * while calls run, the TTL respected, failures (NXDOMAIN, REFUSED, no answer) keeping the last
 * membership, and nothing touching the list after stop.
 */
@Timeout(120)
class DnsPeerListUpdaterTest {
  private static final String SERVICE = "_http._tcp.users.svc.test";

  @TempDir Path dir;
  private final List<AutoCloseable> closing = new ArrayList<>();
  private final HttpTransport http = HttpTransport.builder().eventLoopThreads(1).build();

  @AfterEach
  void close() throws Exception {
    for (int i = closing.size() - 1; i >= 0; i--) {
      closing.get(i).close();
    }
    http.stop();
  }

  private <T extends AutoCloseable> T closeLater(T c) {
    closing.add(c);
    return c;
  }

  private Server server(String name) {
    return closeLater(new Server(name));
  }

  /** SRV records of {@code servers}, each a target of its own resolving to 127.0.0.1. */
  private static List<String> srvRecords(Server... servers) {
    List<String> lines = new ArrayList<>();
    for (Server s : servers) {
      lines.add(srv(SERVICE, s.name + ".users.svc.test", s.port()));
      lines.add(host(s.name + ".users.svc.test", "127.0.0.1"));
    }
    return lines;
  }

  private DnsPeerListUpdater.Builder srvUpdater(Dnsmasq dns) {
    return DnsPeerListUpdater.builder(SERVICE)
        .record(RecordType.SRV)
        .server(dns.address())
        .timeout(Duration.ofMillis(300))
        .minInterval(Duration.ofMillis(100))
        .maxInterval(Duration.ofSeconds(2));
  }

  @Test
  void callsFollowSrvRecordsAsTheyChange() throws Exception {
    Server one = server("one");
    Server two = server("two");
    Server three = server("three");
    Dnsmasq dns = closeLater(Dnsmasq.start(dir, 1, srvRecords(one, two)));
    CountingTransport counting = new CountingTransport(http);
    RecordingList list = new RecordingList(counting);
    DnsPeerListUpdater updater = srvUpdater(dns).timeout(Duration.ofSeconds(2)).build(list);
    Dispatcher client = Fixtures.client(http, BoundPeerChooser.of(list, updater));
    client.start(); // waits for the first lookup
    assertThat(list.peers()).containsExactlyInAnyOrder(one.hostPort(), two.hostPort());

    try (Callers callers = new Callers(client, 4)) {
      assertThat(await(30, () -> one.calls.get() >= 20 && two.calls.get() >= 20)).isTrue();
      assertThat(three.calls.get()).isZero();

      dns.restart(srvRecords(two, three)); // one removed, three added; no answers while it restarts
      assertThat(
              await(
                  30,
                  () -> Set.copyOf(list.peers()).equals(Set.of(two.hostPort(), three.hostPort()))))
          .as("peers %s", list.peers())
          .isTrue();
      int oneAtRemoval = one.calls.get();
      int threeAtAddition = three.calls.get();
      int twoAtChange = two.calls.get();
      assertThat(await(30, () -> three.calls.get() >= threeAtAddition + 50)).isTrue();
      callers.stop();

      assertThat(callers.failures).as("failed calls").isEmpty();
      assertThat(one.calls.get())
          .as("calls to the removed peer")
          .isLessThanOrEqualTo(oneAtRemoval + 4);
      assertThat(two.calls.get() - twoAtChange)
          .as("calls to the peer that stayed")
          .isGreaterThan(25);
      assertThat(callers.succeeded.get())
          .isEqualTo(one.calls.get() + two.calls.get() + three.calls.get());
    }
    assertThat(list.updates) // the first in the order of the answer, which dnsmasq varies
        .containsAnyOf(
            "+[" + one.hostPort() + ", " + two.hostPort() + "] -[]",
            "+[" + two.hostPort() + ", " + one.hostPort() + "] -[]")
        .endsWith("+[" + three.hostPort() + "] -[" + one.hostPort() + "]")
        .hasSize(2);
    UpdaterStatus status = updater.status();
    assertThat(status.kind()).isEqualTo("dns");
    assertThat(status.source())
        .isEqualTo("SRV " + SERVICE + " at 127.0.0.1:" + dns.address().getPort());
    assertThat(status.peers()).containsExactlyInAnyOrder(two.hostPort(), three.hostPort());
    assertThat(status.lastRefresh()).isNotNull();
    assertThat(status.lastError()).isNull();
    ChooserStatus introspected = client.introspect().outbounds().get(0).chooser();
    assertThat(introspected.kind()).isEqualTo("round-robin");
    assertThat(introspected.updater()).isNotNull();
    assertThat(introspected.updater().peers()).isEqualTo(status.peers());

    client.stop();
    assertThat(CountingTransport.snapshot(counting.retains))
        .isEqualTo(Map.of(one.hostPort(), 1, two.hostPort(), 1, three.hostPort(), 1));
    assertThat(CountingTransport.snapshot(counting.releases))
        .isEqualTo(CountingTransport.snapshot(counting.retains));
  }
}
