package io.yarpc.discovery;

import static io.yarpc.discovery.Fixtures.await;
import static io.yarpc.testing.Dnsmasq.host;
import static io.yarpc.testing.Dnsmasq.srv;
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
import io.yarpc.testing.Dnsmasq;
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

  @Test
  void aAndAaaaRecordsGiveAddressesWithThePort() throws Exception {
    Server web = server("web");
    Dnsmasq dns =
        closeLater(
            Dnsmasq.start(
                dir,
                1,
                List.of(
                    host("web.svc.test", "127.0.0.1"),
                    host("web6.svc.test", "::1"),
                    srv(SERVICE, "web.svc.test", web.port()))));
    RecordingList v4 = new RecordingList(http);
    Dispatcher client =
        Fixtures.client(
            http,
            BoundPeerChooser.of(
                v4,
                DnsPeerListUpdater.builder("web.svc.test")
                    .port(web.port())
                    .server(dns.address())
                    .build(v4)));
    client.start();
    assertThat(v4.peers()).containsExactly(web.hostPort());
    assertThat(
            io.yarpc.encoding.raw.RawClient.of(client.clientConfig("users"))
                .call("who", new byte[0], io.yarpc.CallOptions.timeout(Duration.ofSeconds(5)))
                .get(10, java.util.concurrent.TimeUnit.SECONDS))
        .isEqualTo("web".getBytes(java.nio.charset.StandardCharsets.UTF_8));
    client.stop();

    RecordingList v6 = new RecordingList(http);
    DnsPeerListUpdater aaaa =
        DnsPeerListUpdater.builder("web6.svc.test")
            .record(RecordType.AAAA)
            .port(8080)
            .server(dns.address())
            .build(v6);
    aaaa.start();
    assertThat(v6.updates).containsExactly("+[[::1]:8080] -[]");
    assertThat(aaaa.status().source())
        .isEqualTo("AAAA web6.svc.test, port 8080 at 127.0.0.1:" + dns.address().getPort());
    aaaa.stop();

    RecordingList named = new RecordingList(http);
    DnsPeerListUpdater unresolved =
        DnsPeerListUpdater.builder(SERVICE)
            .record(RecordType.SRV)
            .resolveTargets(false)
            .identify(hostPort -> "http://" + hostPort)
            .server(dns.address())
            .build(named);
    unresolved.start();
    assertThat(named.updates).containsExactly("+[http://web.svc.test:" + web.port() + "] -[]");
    unresolved.stop();
  }

  @Test
  void failedLookupsKeepTheLastMembershipAndSayWhy() throws Exception {
    Server one = server("one");
    Server two = server("two");
    Dnsmasq dns = closeLater(Dnsmasq.start(dir, 0, srvRecords(one)));
    RecordingList list = new RecordingList(http);
    DnsPeerListUpdater updater = srvUpdater(dns).build(list);
    BoundPeerChooser<RecordingList> chooser = BoundPeerChooser.of(list, updater);
    chooser.start();
    assertThat(await(20, () -> list.peers().equals(List.of(one.hostPort())))).isTrue();
    String srvFailed = "SRV lookup of " + SERVICE + " failed: ";

    dns.restart(List.of()); // the name is gone
    assertThat(await(20, () -> updater.status().lastError() != null)).isTrue();
    assertThat(updater.status().lastError()).isEqualTo(srvFailed + "NXDOMAIN");

    dns.restart(List.of(srv(SERVICE, "gone.users.svc.test", one.port()))); // its target is not
    assertThat(await(20, () -> updater.status().lastError().startsWith("A lookup"))).isTrue();
    assertThat(updater.status().lastError())
        .isEqualTo(
            "A lookup of gone.users.svc.test (a target of SRV " + SERVICE + ") failed: NXDOMAIN");

    dns.stop(); // no answer at all
    assertThat(await(20, () -> updater.status().lastError().contains("no answer"))).isTrue();
    UpdaterStatus failing = updater.status();
    assertThat(failing.lastError())
        .isEqualTo(
            srvFailed + "no answer from 127.0.0.1:" + dns.address().getPort() + " within 300ms");
    assertThat(failing.consecutiveFailures()).isGreaterThanOrEqualTo(3);
    assertThat(failing.peers()).containsExactly(one.hostPort());
    assertThat(chooser.introspect().updater()).isNotNull();
    assertThat(list.updates).as("no update while lookups fail").hasSize(1);
    assertThat(list.peers()).containsExactly(one.hostPort());

    dns.restart(srvRecords(one, two)); // back, with one more
    assertThat(await(20, () -> list.peers().size() == 2)).isTrue();
    UpdaterStatus recovered = updater.status();
    assertThat(recovered.lastError()).isNull();
    assertThat(recovered.consecutiveFailures()).isZero();
    assertThat(list.updates)
        .containsExactly("+[" + one.hostPort() + "] -[]", "+[" + two.hostPort() + "] -[]");

    chooser.stop(); // stops the updater, then the list
    assertThat(updater.status().running()).isFalse();
    long queriesAtStop = dns.log().lines().filter(l -> l.contains("query[SRV]")).count();
    dns.restart(srvRecords(two));
    Thread.sleep(500); // five times the minimum interval: a running updater would have asked again
    assertThat(dns.log().lines().filter(l -> l.contains("query[SRV]")).count())
        .as("queries after stop")
        .isZero(); // the restart began a new log
    assertThat(queriesAtStop).isGreaterThan(0);
    assertThat(list.updates).hasSize(2);
  }

  @Test
  void aServerThatRefusesOrHasNoSuchRecordsIsAFailure() throws Exception {
    Dnsmasq dns = closeLater(Dnsmasq.start(dir, 1, List.of(host("web.svc.test", "127.0.0.1"))));
    RecordingList refused = new RecordingList(http);
    DnsPeerListUpdater elsewhere =
        DnsPeerListUpdater.builder("_http._tcp.users.elsewhere.test")
            .record(RecordType.SRV)
            .server(dns.address())
            .build(refused);
    elsewhere.start(); // a failed first lookup does not fail the start
    assertThat(elsewhere.isRunning()).isTrue();
    assertThat(elsewhere.status().lastError())
        .isEqualTo("SRV lookup of _http._tcp.users.elsewhere.test failed: REFUSED");
    assertThat(elsewhere.status().peers()).isEmpty();
    assertThat(elsewhere.status().lastRefresh()).isNull();
    elsewhere.stop();

    RecordingList none = new RecordingList(http);
    DnsPeerListUpdater noAaaa =
        DnsPeerListUpdater.builder("web.svc.test")
            .record(RecordType.AAAA)
            .port(80)
            .server(dns.address())
            .build(none);
    noAaaa.start();
    assertThat(noAaaa.status().lastError())
        .isEqualTo("AAAA lookup of web.svc.test failed: no AAAA records");
    noAaaa.stop();
    assertThat(refused.updates).isEmpty();
    assertThat(none.updates).isEmpty();
  }

  @Test
  void lookupsFollowTheTtlWithinTheIntervalBounds() throws Exception {
    Server one = server("one");
    Dnsmasq ttlOne = closeLater(Dnsmasq.start(dir.resolve("a"), 1, srvRecords(one)));
    RecordingList list = new RecordingList(http);
    long started = System.nanoTime();
    DnsPeerListUpdater updater = srvUpdater(ttlOne).minInterval(Duration.ofMillis(20)).build(list);
    updater.start();
    assertThat(await(30, () -> srvQueries(ttlOne) >= 4)).isTrue();
    long seconds = java.util.concurrent.TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started);
    updater.stop();
    // records that live 1 s are asked for again once a second, not every 20 ms
    assertThat(srvQueries(ttlOne) - 1).isLessThanOrEqualTo(seconds + 1);

    Dnsmasq ttlHour = closeLater(Dnsmasq.start(dir.resolve("b"), 3600, srvRecords(one)));
    DnsPeerListUpdater bounded =
        srvUpdater(ttlHour)
            .minInterval(Duration.ofMillis(20))
            .maxInterval(Duration.ofMillis(50))
            .build(new RecordingList(http));
    bounded.start();
    // records that live an hour are asked for again after maxInterval
    assertThat(await(30, () -> srvQueries(ttlHour) >= 5)).isTrue();
    bounded.stop();
  }

  private static long srvQueries(Dnsmasq dns) {
    try {
      return dns.log().lines().filter(l -> l.contains("query[SRV]")).count();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @Test
  void refreshIntervalsFollowTheTtlWithinBounds() {
    Duration min = Duration.ofSeconds(5);
    Duration max = Duration.ofMinutes(1);
    assertThat(DnsPeerListUpdater.refreshAfter(30, min, max)).isEqualTo(Duration.ofSeconds(30));
    assertThat(DnsPeerListUpdater.refreshAfter(0, min, max)).isEqualTo(min);
    assertThat(DnsPeerListUpdater.refreshAfter(86_400, min, max)).isEqualTo(max);
    assertThat(DnsPeerListUpdater.refreshAfter(Long.MAX_VALUE, min, max)).isEqualTo(max);
    assertThat(DnsPeerListUpdater.retryAfter(1, min, max)).isEqualTo(min);
    assertThat(DnsPeerListUpdater.retryAfter(2, min, max)).isEqualTo(Duration.ofSeconds(10));
    assertThat(DnsPeerListUpdater.retryAfter(4, min, max)).isEqualTo(Duration.ofSeconds(40));
    assertThat(DnsPeerListUpdater.retryAfter(5, min, max)).isEqualTo(max);
    assertThat(DnsPeerListUpdater.retryAfter(1_000, min, max)).isEqualTo(max);
  }
}
