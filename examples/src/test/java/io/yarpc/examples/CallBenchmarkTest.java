package io.yarpc.examples;

import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.testing.Dnsmasq;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code call}'s peer flags and benchmark mode against three {@code serve} services in this JVM (each on
 * HTTP, gRPC and TChannel): calls spread over {@code --peers}, a {@code --peer-file}, DNS records served
 * by dnsmasq and a configuration file's peer list, counted per peer on the client; {@code --requests},
 * {@code --duration}, {@code --rps}, {@code --warmup}, errors by code; and every bad combination of flags.
 */
@Timeout(180)
class CallBenchmarkTest {
  private static final List<Serve> servers = new ArrayList<>();

  @BeforeAll
  static void startThreeServers() {
    for (int i = 0; i < 3; i++) {
      servers.add(Serve.start("127.0.0.1", 0, 0, 0));
    }
  }

  @AfterAll
  static void stopServers() {
    servers.forEach(Serve::close);
  }

  /** What one {@code call} printed and returned, and its report read back. */
  record Run(int status, String out, String err) {
    /** The calls the report counts. */
    long calls() {
      Matcher m = Pattern.compile("(?m)^calls: +(\\d+) in ").matcher(out);
      assertThat(m.find()).as(out).isTrue();
      return Long.parseLong(m.group(1));
    }

    /** The rows under "calls per peer", by peer. */
    Map<String, Long> perPeer() {
      Map<String, Long> rows = new LinkedHashMap<>();
      boolean in = false;
      for (String line : out.lines().toList()) {
        if (line.startsWith("calls per peer")) {
          in = true;
        } else if (in) {
          String[] cells = line.trim().split(" +");
          rows.put(cells[0], Long.parseLong(cells[1]));
        }
      }
      return rows;
    }
  }

  private static String peer(int server, String transport) {
    return servers.get(server).peers().get(transport);
  }

  private static Run call(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status =
        CallCommand.run(
            args,
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Run(
        status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /** {@code call} of {@code echo/raw} on {@code transport}, with {@code more} flags. */
  private static Run echo(String transport, String... more) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--transport",
                transport,
                "--service",
                Serve.SERVICE,
                "--procedure",
                "echo/raw",
                "--encoding",
                "raw",
                "--timeout",
                "10s"));
    args.addAll(List.of(more));
    args.add("hello");
    return call(args.toArray(String[]::new));
  }

  @ParameterizedTest
  @ValueSource(strings = {"http", "grpc", "tchannel"})
  void roundRobinOverThreePeersGivesEachAThird(String transport) {
    String peers = peer(0, transport) + "," + peer(1, transport) + "," + peer(2, transport);
    Run run = echo(transport, "--peers", peers, "--requests", "300", "--concurrency", "3");

    assertThat(run.status()).as(run.err() + run.out()).isZero();
    assertThat(run.calls()).isEqualTo(300);
    assertThat(run.out())
        .contains("successes:    300\n", "errors:       0\n", "calls per peer (round-robin):")
        .containsPattern("(?m)^  p50 +[0-9.]+(µs|ms|s)$")
        .containsPattern("(?m)^  p99\\.9 +[0-9.]+(µs|ms|s)$")
        .containsPattern("(?m)^  max +[0-9.]+(µs|ms|s)$");
    Map<String, Long> perPeer = run.perPeer();
    assertThat(perPeer)
        .containsOnlyKeys(peer(0, transport), peer(1, transport), peer(2, transport));
    assertThat(perPeer.values().stream().mapToLong(Long::longValue).sum()).isEqualTo(300);
    // every peer is connected before the first call, so round-robin takes them in turn
    assertThat(perPeer.values()).allSatisfy(n -> assertThat(n).isBetween(80L, 120L));
  }

  @Test
  void aPeerFileOfTwoServers(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("peers.json");
    Files.writeString(file, "[\"" + peer(0, "grpc") + "\", \"" + peer(1, "grpc") + "\"]");
    Run run =
        echo("grpc", "--peer-file", file.toString(), "--requests", "100", "--concurrency", "2");

    assertThat(run.status()).as(run.err() + run.out()).isZero();
    assertThat(run.calls()).isEqualTo(100);
    assertThat(run.perPeer()).containsOnlyKeys(peer(0, "grpc"), peer(1, "grpc"));
    assertThat(run.perPeer().values()).allSatisfy(n -> assertThat(n).isBetween(40L, 60L));
  }

  @Test
  void aHashRingSendsOneShardKeysCallsToOnePeer() {
    String peers = peer(0, "http") + "," + peer(1, "http") + "," + peer(2, "http");
    Run run =
        echo(
            "http",
            "--peers",
            peers,
            "--peer-list",
            "hashring32",
            "--shard-key",
            "user-7",
            "--requests",
            "30",
            "--concurrency",
            "3");
    assertThat(run.status()).as(run.err() + run.out()).isZero();
    assertThat(run.out()).contains("calls per peer (hashring32):");
    assertThat(run.perPeer().values()).containsExactlyInAnyOrder(30L, 0L, 0L);
  }

  @Test
  void anRpsLimitedRunCompletesAtNoMoreThanItsRate() {
    Run run = echo("grpc", "--peer", peer(0, "grpc"), "--requests", "20", "--rps", "40");
    assertThat(run.status()).as(run.err() + run.out()).isZero();
    assertThat(run.calls()).isEqualTo(20);
    assertThat(run.out())
        .contains("(concurrency 1, rps 40)", "calls per peer (single): all to " + peer(0, "grpc"));
    // 20 starts 25 ms apart take at least 19 intervals: a lower bound the pacer guarantees, however
    // slow the machine
    Matcher m = Pattern.compile("in ([0-9.]+)(ms|s),").matcher(run.out());
    assertThat(m.find()).isTrue();
    double millis = Double.parseDouble(m.group(1)) * (m.group(2).equals("s") ? 1000 : 1);
    assertThat(millis).isGreaterThanOrEqualTo(19 * 25);
  }

  @Test
  void aDurationBoundedRunCountsEveryCallItMade() {
    String peers = peer(0, "tchannel") + "," + peer(1, "tchannel");
    Run run = echo("tchannel", "--peers", peers, "--duration", "300ms", "--concurrency", "2");
    assertThat(run.status()).as(run.err() + run.out()).isZero();
    assertThat(run.calls()).isPositive();
    assertThat(run.perPeer().values().stream().mapToLong(Long::longValue).sum())
        .isEqualTo(run.calls());
  }

  @Test
  void warmUpCallsAreLeftOutOfTheResults() {
    String peers = peer(0, "http") + "," + peer(1, "http");
    Run run = echo("http", "--peers", peers, "--warmup", "25", "--requests", "40");
    assertThat(run.status()).as(run.err() + run.out()).isZero();
    assertThat(run.calls()).isEqualTo(40);
    assertThat(run.perPeer().values().stream().mapToLong(Long::longValue).sum()).isEqualTo(40);
  }

  @Test
  void failedCallsAreCountedByCodeAndFailTheRun() {
    Run run =
        call(
            "--transport",
            "grpc",
            "--service",
            Serve.SERVICE,
            "--peer",
            peer(0, "grpc"),
            "--procedure",
            "sleep/raw",
            "--encoding",
            "raw",
            "--timeout",
            "50ms",
            "--requests",
            "4",
            "--concurrency",
            "2",
            "2000");
    assertThat(run.status()).isEqualTo(1);
    assertThat(run.calls()).isEqualTo(4);
    assertThat(run.out())
        .contains("successes:    0\n", "errors:       4\n")
        .containsPattern("(?m)^  deadline-exceeded +4$")
        .contains("latency of successful calls: none succeeded");
  }

  @Test
  void aConfigFilesPeerListIsCountedToo(@TempDir Path dir) throws Exception {
    Path config = dir.resolve("yarpc.yaml");
    Files.writeString(
        config,
        String.join(
            "\n",
            "outbounds:",
            "  spread:",
            "    service: " + Serve.SERVICE,
            "    grpc:",
            "      random:",
            "        peers: [" + peer(1, "grpc") + ", " + peer(2, "grpc") + "]",
            ""));
    Run run =
        call(
            "--config",
            config.toString(),
            "--outbound",
            "spread",
            "--procedure",
            "echo/raw",
            "--encoding",
            "raw",
            "--requests",
            "60",
            "--concurrency",
            "2",
            "x");
    assertThat(run.status()).as(run.err() + run.out()).isZero();
    assertThat(run.out()).contains("calls per peer (random):");
    assertThat(run.perPeer()).containsOnlyKeys(peer(1, "grpc"), peer(2, "grpc"));
    assertThat(run.perPeer().values().stream().mapToLong(Long::longValue).sum()).isEqualTo(60);
  }

  @Test
  void dnsSrvAndARecordsFromDnsmasq(@TempDir Path dir) throws Exception {
    int one = servers.get(0).grpcAddress().getPort();
    int two = servers.get(1).grpcAddress().getPort();
    try (Dnsmasq dns =
        Dnsmasq.start(
            dir,
            60,
            List.of(
                Dnsmasq.host("s.yarpc.svc.test", "127.0.0.1"),
                Dnsmasq.srv("_grpc._tcp.yarpc.svc.test", "s.yarpc.svc.test", one),
                Dnsmasq.srv("_grpc._tcp.yarpc.svc.test", "s.yarpc.svc.test", two)))) {
      String server = "127.0.0.1:" + dns.address().getPort();
      Run srv =
          echo(
              "grpc",
              "--dns-srv",
              "_grpc._tcp.yarpc.svc.test",
              "--dns-server",
              server,
              "--requests",
              "40",
              "--concurrency",
              "2");
      assertThat(srv.status()).as(srv.err() + srv.out()).isZero();
      assertThat(srv.perPeer()).containsOnlyKeys("127.0.0.1:" + one, "127.0.0.1:" + two);
      assertThat(srv.perPeer().values()).allSatisfy(n -> assertThat(n).isBetween(15L, 25L));

      Run a = echo("grpc", "--dns-a", "s.yarpc.svc.test:" + two, "--dns-server", server);
      assertThat(a.status()).as(a.err()).isZero();
      assertThat(a.out()).contains("\"body\": \"hello\"");

      Run missing =
          echo(
              "grpc",
              "--dns-srv",
              "_nope._tcp.yarpc.svc.test",
              "--dns-server",
              server,
              "--timeout",
              "300ms");
      assertThat(missing.status()).isEqualTo(1);
      assertThat(missing.err())
          .contains(
              "code:deadline-exceeded", "SRV lookup of _nope._tcp.yarpc.svc.test failed: NXDOMAIN");
    }
  }

  @Test
  void badPeerAndBenchmarkFlagsAreUsageErrors(@TempDir Path dir) {
    String p = peer(0, "http");
    assertUsageError(
        echo("http", "--peer", p, "--peers", p),
        "call: give one of --peer, --peers, --peer-file, --dns-srv, --dns-a, --dns-aaaa,"
            + " got --peer and --peers");
    assertUsageError(
        echo("http", "--peers", p, "--dns-srv", "x.svc.test"),
        "call: give one of --peer, --peers, --peer-file, --dns-srv, --dns-a, --dns-aaaa,"
            + " got --peers and --dns-srv");
    assertUsageError(
        echo("http", "--peers", p, "--peer-list", "fastest"),
        "call: --peer-list must be one of round-robin, fewest-pending-requests, random,"
            + " two-random-choices, hashring32, got \"fastest\"");
    assertUsageError(
        echo("http", "--peer", p, "--peer-list", "random"),
        "call: --peer-list needs several peers: --peers, --peer-file or --dns-*, not --peer");
    assertUsageError(
        echo("http", "--peers", p + ",nowhere"),
        "call: --peers: not host:port: \"nowhere\" (no port)");
    assertUsageError(echo("http", "--peers", p + "," + p), "call: --peers: duplicate peer");
    assertUsageError(
        echo("http", "--peers", p, "--dns-server", "127.0.0.1"),
        "call: --dns-server needs --dns-srv, --dns-a or --dns-aaaa");
    assertUsageError(
        echo("http", "--dns-srv", "x.svc.test", "--dns-server", "dns.example"),
        "call: --dns-server: not an IP address with an optional port: \"dns.example\"");
    assertUsageError(
        echo("http", "--dns-a", "x.svc.test"),
        "call: --dns-a wants NAME:PORT (the peers' port), got \"x.svc.test\"");
    assertUsageError(
        echo("http", "--dns-aaaa", "x.svc.test:0"),
        "call: --dns-aaaa wants NAME:PORT with a port from 1 to 65535, got port \"0\"");
    assertUsageError(
        echo("http", "--peer-file", dir.resolve("absent.yaml").toString()),
        "call: --peer-file: cannot read " + dir.resolve("absent.yaml"));
    assertUsageError(
        echo("http", "--peer", p, "--concurrency", "4"),
        "call: --concurrency is for benchmark mode: add --requests N or --duration D");
    assertUsageError(
        echo("http", "--peer", p, "--requests", "0"),
        "call: --requests must be a whole number of at least 1, got \"0\"");
    assertUsageError(
        echo("http", "--peer", p, "--requests", "5", "--concurrency", "100000"),
        "call: --concurrency must be a whole number from 1 to 10000, got \"100000\"");
    assertUsageError(
        echo("http", "--peer", p, "--duration", "soon"),
        "call: --duration wants a duration such as 1s or 500ms, got \"soon\"");
    assertUsageError(
        echo("http", "--peer", p, "--requests", "5", "--rps", "-1"),
        "call: --rps must be a whole number of at least 0, got \"-1\"");
    assertUsageError(
        call("--service", "s", "--procedure", "p", "--encoding", "raw", "--outbound", "o"),
        "call: --outbound needs --config");
    assertUsageError(
        call(
            "--config",
            "yarpc.yaml",
            "--outbound",
            "o",
            "--peers",
            p,
            "--procedure",
            "p",
            "--encoding",
            "raw"),
        "call: --peers cannot be used with --config (the outbound comes from the file)");
  }

  private static void assertUsageError(Run run, String message) {
    assertThat(run.status()).as(run.out() + run.err()).isEqualTo(2);
    assertThat(run.out()).isEmpty();
    assertThat(run.err()).startsWith(message).contains("usage: java -jar yarpc-examples.jar call");
  }
}
