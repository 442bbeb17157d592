package io.yarpc.discovery;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.CallOptions;
import io.yarpc.Dispatcher;
import io.yarpc.DispatcherStatus.OutboundStatus;
import io.yarpc.config.ConfigException;
import io.yarpc.config.YarpcConfig;
import io.yarpc.discovery.Fixtures.Server;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.peer.BoundPeerChooser;
import io.yarpc.peer.RoundRobinPeerList;
import io.yarpc.testing.Dnsmasq;
import io.yarpc.transport.http.HttpOutbound;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The {@code dns} and {@code peers-file} blocks of a configuration file, found through ServiceLoader:
 * outbounds fed by them call real servers, and each bad block fails with exactly its problems.
 */
@Timeout(60)
class DiscoveryConfigTest {
  private static final String OUTBOUND = "outbounds.users.http.round-robin.";

  @TempDir Path dir;

  @Test
  void dnsAndPeersFileBlocksFeedOutbounds() throws Exception {
    try (Server one = new Server("one");
        Server two = new Server("two");
        Dnsmasq dns =
            Dnsmasq.start(
                dir.resolve("dns"),
                1,
                List.of(
                    Dnsmasq.srv("_http._tcp.users.svc.test", "one.users.svc.test", one.port()),
                    Dnsmasq.host("one.users.svc.test", "127.0.0.1")))) {
      Path peers = dir.resolve("peers.yaml");
      Files.writeString(peers, "- " + two.hostPort() + "\n");
      String yaml =
          String.join(
              "\n",
              "outbounds:",
              "  by-dns:",
              "    service: users",
              "    http:",
              "      url: http://users/",
              "      round-robin:",
              "        failFast: false",
              "        dns:",
              "          name: _http._tcp.users.svc.test",
              "          record: SRV",
              "          server: ${DNS}",
              "          timeout: 2s",
              "          minInterval: 100ms",
              "          maxInterval: 10s",
              "  by-file:",
              "    service: users",
              "    http:",
              "      url: http://users/",
              "      round-robin:",
              "        peers-file: {path: \"" + peers + "\", pollInterval: 1s}",
              "");
      Dispatcher client =
          YarpcConfig.loader()
              .environment(Map.of("DNS", "127.0.0.1:" + dns.address().getPort())::get)
              .load("client", new StringReader(yaml))
              .build();
      HttpOutbound byDns = (HttpOutbound) client.outbounds().get("by-dns").unary();
      assertThat(byDns.chooser()).isInstanceOf(BoundPeerChooser.class);
      assertThat(((BoundPeerChooser<?>) byDns.chooser()).list())
          .isInstanceOf(RoundRobinPeerList.class);
      assertThat(((BoundPeerChooser<?>) byDns.chooser()).updater())
          .isInstanceOf(DnsPeerListUpdater.class);
      client.start();
      try {
        assertThat(call(client, "by-dns")).isEqualTo("one");
        assertThat(call(client, "by-file")).isEqualTo("two");
        List<OutboundStatus> outbounds = client.introspect().outbounds();
        assertThat(outbounds.get(0).chooser().updater().kind()).isEqualTo("dns");
        assertThat(outbounds.get(0).chooser().updater().peers()).containsExactly(one.hostPort());
        assertThat(outbounds.get(1).chooser().updater().kind()).isEqualTo("peers-file");
        assertThat(outbounds.get(1).chooser().updater().source()).isEqualTo(peers.toString());
      } finally {
        client.stop();
      }
    }
  }

  @Test
  void anHttpsOutboundIdentifiesWhatTheUpdaterFinds() throws Exception {
    Path peers = dir.resolve("peers.json");
    Files.writeString(peers, "[\"10.0.0.1:8443\"]");
    String yaml =
        "outbounds:\n  users:\n    http:\n      url: https://users/\n      round-robin:\n"
            + "        peers-file: {path: \""
            + peers
            + "\"}\n";
    Dispatcher client = YarpcConfig.load("client", new StringReader(yaml)).build();
    BoundPeerChooser<?> chooser =
        (BoundPeerChooser<?>) ((HttpOutbound) client.outbounds().get("users").unary()).chooser();
    chooser.start();
    try {
      assertThat(chooser.updater().status().peers()).containsExactly("https://10.0.0.1:8443");
    } finally {
      chooser.stop();
    }
  }

  private static String call(Dispatcher client, String outbound) throws Exception {
    return new String(
        RawClient.of(client.clientConfig(outbound))
            .call("who", new byte[0], CallOptions.timeout(Duration.ofSeconds(5)))
            .get(10, TimeUnit.SECONDS),
        UTF_8);
  }

  static Stream<Arguments> badBlocks() {
    return Stream.of(
        Arguments.of("dns: {}", List.of(OUTBOUND + "dns.name: missing required key")),
        Arguments.of("dns:", List.of(OUTBOUND + "dns.name: missing required key")),
        Arguments.of(
            "dns: {name: users..svc.test, port: 80}",
            List.of(
                OUTBOUND
                    + "dns.name: not a DNS name: \"users..svc.test\" (Empty label is not a legal"
                    + " name)")),
        Arguments.of(
            "dns: {name: users.svc.test, port: 80, server: \"::1\", record: aaaa}", List.of()),
        Arguments.of(
            "dns: {name: users.svc.test, record: MX, port: 80}",
            List.of(OUTBOUND + "dns.record: not one of a, aaaa, srv: \"MX\"")),
        Arguments.of(
            "dns: {name: users.svc.test}",
            List.of(OUTBOUND + "dns.port: missing required key (A records give addresses only)")),
        Arguments.of(
            "dns: {name: _http._tcp.users.svc.test, record: srv, port: 80}",
            List.of(OUTBOUND + "dns.port: not with SRV records: each record gives its own port")),
        Arguments.of(
            "dns: {name: users.svc.test, port: 70000}",
            List.of(OUTBOUND + "dns.port: port must be 1 to 65535: 70000")),
        Arguments.of(
            "dns: {name: users.svc.test, port: 80, resolveTargets: false}",
            List.of(OUTBOUND + "dns.resolveTargets: only with record: SRV")),
        Arguments.of(
            "dns: {name: users.svc.test, port: 80, server: dns.local}",
            List.of(
                OUTBOUND
                    + "dns.server: not an IP address with an optional port: \"dns.local\" (e.g."
                    + " 10.96.0.10, 127.0.0.1:5353, [::1]:53)")),
        Arguments.of(
            "dns: {name: users.svc.test, port: 80, server: \"127.0.0.1:99999\"}",
            List.of(OUTBOUND + "dns.server: not a port from 1 to 65535 in \"127.0.0.1:99999\"")),
        Arguments.of(
            "dns: {name: users.svc.test, port: 80, minInterval: 2m}",
            List.of(
                OUTBOUND + "dns.minInterval: 2m0s is longer than the default maxInterval 1m0s")),
        Arguments.of(
            "dns: {name: users.svc.test, port: 80, minInterval: 10s, maxInterval: 5s}",
            List.of(OUTBOUND + "dns.minInterval: 10s is longer than maxInterval 5s")),
        Arguments.of(
            "dns: {name: users.svc.test, port: 80, timeout: 0}",
            List.of(OUTBOUND + "dns.timeout: timeout must be positive: PT0S")),
        Arguments.of(
            "dns: {name: users.svc.test, port: 80, ttl: 5s}",
            List.of(
                OUTBOUND
                    + "dns.ttl: unknown key (known keys here: maxInterval, minInterval, name, port,"
                    + " record, resolveTargets, server, timeout)")),
        Arguments.of("peers-file: {}", List.of(OUTBOUND + "peers-file.path: missing required key")),
        Arguments.of(
            "peers-file: {path: /etc/peers, format: xml}",
            List.of(OUTBOUND + "peers-file.format: not one of json, yaml: \"xml\"")),
        Arguments.of(
            "peers-file: {path: /etc/peers, pollInterval: soon}",
            List.of(
                OUTBOUND
                    + "peers-file.pollInterval: not a duration: \"soon\" (not a number followed by"
                    + " a unit; e.g. 500ms, 1m30s)")),
        Arguments.of(
            "peers-file: [/etc/peers]",
            List.of(OUTBOUND + "peers-file: expected a mapping, got a list")),
        Arguments.of(
            "peers: [127.0.0.1:1]\n        dns: {name: users.svc.test, port: 80}",
            List.of(
                "outbounds.users.http.round-robin: give one peer list updater, got peers and dns")),
        Arguments.of(
            "dns: {name: users.svc.test, port: 80}\n        peers-file: {path: /etc/peers}",
            List.of(
                "outbounds.users.http.round-robin: give one peer list updater, got dns and"
                    + " peers-file")),
        Arguments.of(
            "failFast: true",
            List.of(
                "outbounds.users.http.round-robin: no peers: give them as \"peers: [host:port,"
                    + " ...]\" or name a peer list updater (dns, peers-file)")),
        Arguments.of(
            "consul: {service: users}",
            List.of(
                OUTBOUND.substring(0, OUTBOUND.length() - 1)
                    + ": no peers: give them as \"peers: [host:port, ...]\" or name a peer list"
                    + " updater (dns, peers-file)",
                OUTBOUND
                    + "consul: unknown key (known keys here: defaultChooseTimeout, dns, failFast,"
                    + " outlierDetection, peers, peers-file)")));
  }

  @ParameterizedTest
  @MethodSource("badBlocks")
  void badBlocksFailWithTheirPaths(String block, List<String> problems) {
    String yaml =
        "outbounds:\n  users:\n    http:\n      url: http://users/\n      round-robin:\n        "
            + block
            + "\n";
    assertThat(problems(yaml)).isEqualTo(problems);
  }

  private static List<String> problems(String yaml) {
    try {
      YarpcConfig.load("client", new StringReader(yaml));
      return List.of();
    } catch (ConfigException e) {
      return e.problems().stream().map(ConfigException.Problem::toString).toList();
    }
  }
}
