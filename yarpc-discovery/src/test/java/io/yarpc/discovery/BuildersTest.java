package io.yarpc.discovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.yarpc.discovery.DnsPeerListUpdater.RecordType;
import io.yarpc.peer.PeerList;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What the builders refuse, and what they say. */
class BuildersTest {
  private final List<String> updates = new ArrayList<>();
  private final PeerList list = (additions, removals) -> updates.add(additions + " " + removals);

  @Test
  void dnsBuilderRefusals() {
    assertThatThrownBy(() -> DnsPeerListUpdater.builder(" "))
        .hasMessage("the name to look up must not be empty");
    assertThatThrownBy(() -> DnsPeerListUpdater.builder("_http._tcp..svc"))
        .hasMessage("not a DNS name: \"_http._tcp..svc\" (Empty label is not a legal name)");
    DnsPeerListUpdater.Builder b = DnsPeerListUpdater.builder("users.svc.test");
    assertThatThrownBy(() -> b.port(0)).hasMessage("port must be 1 to 65535: 0");
    assertThatThrownBy(() -> b.port(65536)).hasMessage("port must be 1 to 65535: 65536");
    assertThatThrownBy(() -> b.server(InetSocketAddress.createUnresolved("dns.local", 53)))
        .hasMessage("the DNS server must be an IP address: dns.local");
    assertThatThrownBy(() -> b.timeout(Duration.ZERO)).hasMessage("timeout must be positive: PT0S");
    assertThatThrownBy(() -> b.minInterval(Duration.ofSeconds(-1)))
        .hasMessage("minInterval must be positive: PT-1S");
    assertThatThrownBy(() -> b.build(list))
        .hasMessage("a port is required with A records (they give addresses only)");
    assertThatThrownBy(() -> b.record(RecordType.AAAA).resolveTargets(false).port(80).build(list))
        .hasMessage("resolveTargets is for SRV records only");
    assertThatThrownBy(
            () ->
                DnsPeerListUpdater.builder("_http._tcp.users")
                    .record(RecordType.SRV)
                    .port(80)
                    .build(list))
        .hasMessage("no port with SRV records: each record gives its own");
    assertThatThrownBy(
            () ->
                DnsPeerListUpdater.builder("users")
                    .port(80)
                    .minInterval(Duration.ofMinutes(2))
                    .build(list))
        .hasMessage("minInterval (2m0s) must not be longer than maxInterval (1m0s)");
    assertThatThrownBy(() -> DnsPeerListUpdater.builder("users").port(80).build(null))
        .isInstanceOf(NullPointerException.class);
  }

  @Test
  void aBuiltUpdaterTouchesNothingBeforeStart() {
    DnsPeerListUpdater dns = DnsPeerListUpdater.builder("users.svc.test").port(80).build(list);
    assertThat(dns.isRunning()).isFalse();
    assertThat(dns.status().running()).isFalse();
    assertThat(dns.status().source()).isEqualTo("A users.svc.test, port 80");
    assertThat(dns.status().peers()).isEmpty();
    dns.stop(); // before start: stopped, nothing to release
    assertThatThrownBy(dns::start).hasMessageContaining("was stopped and cannot start again");
    FilePeerListUpdater file = FilePeerListUpdater.builder(Path.of("peers.yaml")).build(list);
    assertThat(file.status().source()).isEqualTo(Path.of("peers.yaml").toAbsolutePath().toString());
    file.stop();
    assertThat(updates).isEmpty();
  }

  @Test
  void fileBuilderRefusals() {
    FilePeerListUpdater.Builder b = FilePeerListUpdater.builder(Path.of("peers.yaml"));
    assertThatThrownBy(() -> b.pollInterval(Duration.ZERO))
        .hasMessage("pollInterval must be positive: PT0S");
    assertThatThrownBy(() -> b.format(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> b.identify(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> FilePeerListUpdater.builder(null))
        .isInstanceOf(NullPointerException.class);
  }
}
