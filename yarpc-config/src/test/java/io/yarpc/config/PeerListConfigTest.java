package io.yarpc.config;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.yarpc.CallOptions;
import io.yarpc.Dispatcher;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.peer.AbstractPeerList;
import io.yarpc.peer.FewestPendingPeerList;
import io.yarpc.peer.HashRingPeerList;
import io.yarpc.peer.OutlierDetection;
import io.yarpc.peer.RandomPeerList;
import io.yarpc.peer.RoundRobinPeerList;
import io.yarpc.peer.TwoRandomChoicesPeerList;
import io.yarpc.transport.http.HttpInbound;
import io.yarpc.transport.http.HttpOutbound;
import io.yarpc.transport.http.HttpTransport;
import java.io.StringReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every provided peer list under its yarpc-go name in an outbound section: it builds that list with the
 * block's options, and calls reach real HTTP servers through it; bad options fail with their key path.
 */
@Timeout(60)
class PeerListConfigTest {
  private final List<Dispatcher> dispatchers = new ArrayList<>();

  @AfterEach
  void stop() {
    dispatchers.forEach(Dispatcher::stop);
  }

  /** A server that answers procedure {@code who} with {@code name}; its host:port. */
  private String server(String name) {
    HttpInbound in = HttpTransport.builder().eventLoopThreads(1).build().inboundBuilder().build();
    Dispatcher d = Dispatcher.builder("counting").inbound(in).build();
    d.register(Raw.procedure("who", body -> name.getBytes(UTF_8)));
    d.start();
    dispatchers.add(d);
    return in.hostPort();
  }

  private Dispatcher client(String yaml) {
    Dispatcher d = YarpcConfig.load("client", new StringReader(yaml)).build();
    dispatchers.add(d);
    return d;
  }

  private static String outbound(String block) {
    return "outbounds:\n  counting:\n    http:\n" + block.indent(6);
  }

  /** Starts {@code d} and waits until every peer of its outbound's list is in rotation. */
  private static AbstractPeerList startAndAwaitPeers(Dispatcher d) throws InterruptedException {
    d.start();
    AbstractPeerList list =
        (AbstractPeerList) ((HttpOutbound) d.outbounds().get("counting").unary()).chooser();
    for (int i = 0; i < 1_000 && !list.unavailablePeers().isEmpty(); i++) {
      Thread.sleep(10);
    }
    assertThat(list.unavailablePeers()).isEmpty();
    return list;
  }

  private static String call(Dispatcher d, CallOptions.Builder options) throws Exception {
    byte[] reply =
        RawClient.of(d.clientConfig("counting"))
            .call("who", new byte[0], options.timeout(Duration.ofSeconds(10)).build())
            .get(20, TimeUnit.SECONDS);
    return new String(reply, UTF_8);
  }

  private static int closedPort() throws Exception {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  static Stream<Arguments> lists() {
    return Stream.of(
        Arguments.of(RoundRobinPeerList.NAME, RoundRobinPeerList.class),
        Arguments.of(FewestPendingPeerList.NAME, FewestPendingPeerList.class),
        Arguments.of(RandomPeerList.NAME, RandomPeerList.class),
        Arguments.of(TwoRandomChoicesPeerList.NAME, TwoRandomChoicesPeerList.class),
        Arguments.of(HashRingPeerList.NAME, HashRingPeerList.class));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("lists")
  void eachListIsConfiguredByItsNameAndCarriesCalls(String name, Class<?> type) throws Exception {
    String one = server("one");
    String two = server("two");
    Dispatcher d =
        client(
            outbound(
                name
                    + ":\n  peers: ["
                    + one
                    + ", "
                    + two
                    + "]\n  failFast: false\n  defaultChooseTimeout: 2s\n"));
    AbstractPeerList list =
        (AbstractPeerList) ((HttpOutbound) d.outbounds().get("counting").unary()).chooser();
    assertThat(list).isInstanceOf(type);
    assertThat(list.name()).isEqualTo(name);
    assertThat(list.peerIdentifiers()).containsExactly(one, two);
    startAndAwaitPeers(d);
    Set<String> answered = new HashSet<>();
    for (int i = 0; i < 40; i++) {
      answered.add(call(d, CallOptions.builder().shardKey("key-" + i)));
    }
    assertThat(answered).containsExactlyInAnyOrder("one", "two");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("lists")
  void failFastMakesACallWithoutAPeerFailAtOnce(String name, Class<?> type) throws Exception {
    Dispatcher d =
        client(outbound(name + ":\n  peers: [127.0.0.1:" + closedPort() + "]\n  failFast: true\n"));
    d.start();
    Throwable t = catchThrowable(() -> call(d, CallOptions.builder().shardKey("k")));
    assertThat(t).isInstanceOf(ExecutionException.class);
    YarpcException e = (YarpcException) t.getCause();
    assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(e.getMessage())
        .contains(
            "\"" + name + "\" peer list has 1 peer but it is not responsive, did not wait",
            "(fail-fast is enabled)");
  }

  @Test
  void hashRingOptionsRouteRealCalls() throws Exception {
    List<String> peers = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      peers.add(server("server-" + i));
    }
    Dispatcher d =
        client(
            outbound(
                String.join(
                    "\n",
                    "hashring32:",
                    "  peers: [" + String.join(", ", peers) + "]",
                    "  numReplicas: 20",
                    "  replicaDelimiter: \"#\"",
                    "  peerOverrideHeader: X-Peer",
                    "  offsetHeader: X-Offset",
                    "  alternateShardKeyHeader: \"\"", // Go's unset value: sets nothing
                    "")));
    startAndAwaitPeers(d);
    // a key stays on one server; offsets 0, 1 and 2 reach the three
    String owner = call(d, CallOptions.builder().shardKey("user-7"));
    Set<String> byOffset = new HashSet<>();
    for (int n = 0; n < 3; n++) {
      String at = call(d, CallOptions.builder().shardKey("user-7").header("x-offset", "" + n));
      byOffset.add(at);
      if (n == 0) {
        assertThat(at).isEqualTo(owner);
      }
    }
    assertThat(byOffset).containsExactlyInAnyOrder("server-1", "server-2", "server-3");
    // the override header names a peer
    for (int i = 0; i < 3; i++) {
      assertThat(call(d, CallOptions.builder().shardKey("user-7").header("x-peer", peers.get(i))))
          .isEqualTo("server-" + (i + 1));
    }
    // a bad offset is the caller's error
    Throwable t =
        catchThrowable(
            () -> call(d, CallOptions.builder().shardKey("user-7").header("x-offset", "first")));
    YarpcException e = (YarpcException) t.getCause();
    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(e.getMessage()).contains("header x-offset must be a ring offset");
  }

  @Test
  void anOutlierDetectionBlockEjectsAServerThatFailsEveryCall() throws Exception {
    String one = server("one");
    String two = server("two");
    String broken = failingServer();
    Dispatcher d =
        client(
            outbound(
                String.join(
                    "\n",
                    "round-robin:",
                    "  peers: [" + one + ", " + two + ", " + broken + "]",
                    "  outlierDetection:",
                    "    consecutiveFailures: 2",
                    "    baseEjectionTime: 1m",
                    "")));
    AbstractPeerList list = startAndAwaitPeers(d);
    assertThat(list.outlierDetection().toString())
        .isEqualTo(
            "OutlierDetection{consecutiveFailures=2, failurePercent=0, minRequests=50,"
                + " interval=10s, baseEjectionTime=1m0s, maxEjectionTime=5m0s,"
                + " maxEjectionPercent=10}");
    int failures = 0;
    for (int i = 0; i < 30; i++) {
      try {
        assertThat(call(d, CallOptions.builder())).isIn("one", "two");
      } catch (ExecutionException e) {
        assertThat(((YarpcException) e.getCause()).code()).isEqualTo(Code.UNAVAILABLE);
        failures++;
      }
    }
    assertThat(failures).isEqualTo(2);
    assertThat(list.availablePeers()).containsExactlyInAnyOrder(one, two);
    assertThat(list.introspect().peers().get(2).unavailableReason())
        .startsWith(
            "ejected for 1m0s after 2 consecutive failures (last: unavailable: under"
                + " maintenance)");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("lists")
  void everyListReadsEveryOutlierDetectionKey(String name, Class<?> type) {
    Dispatcher d =
        client(
            outbound(
                String.join(
                    "\n",
                    name + ":",
                    "  peers: [127.0.0.1:1]",
                    "  outlierDetection: {consecutiveFailures: 7, failurePercent: 60, minRequests: 20,"
                        + " interval: 30s, baseEjectionTime: 10s, maxEjectionTime: 2m,"
                        + " maxEjectionPercent: 34}",
                    "")));
    AbstractPeerList list =
        (AbstractPeerList) ((HttpOutbound) d.outbounds().get("counting").unary()).chooser();
    assertThat(list.outlierDetection().toString())
        .isEqualTo(
            "OutlierDetection{consecutiveFailures=7, failurePercent=60, minRequests=20,"
                + " interval=30s, baseEjectionTime=10s, maxEjectionTime=2m0s,"
                + " maxEjectionPercent=34}");
  }

  @Test
  void anEmptyOutlierDetectionBlockMeansTheDefaultsAndNoBlockMeansOff() {
    Dispatcher on = client(outbound("random:\n  peers: [127.0.0.1:1]\n  outlierDetection: {}\n"));
    Dispatcher alsoOn = client(outbound("random:\n  peers: [127.0.0.1:1]\n  outlierDetection:\n"));
    Dispatcher off = client(outbound("random:\n  peers: [127.0.0.1:1]\n"));
    for (Dispatcher d : List.of(on, alsoOn)) {
      assertThat(chooser(d).outlierDetection().toString())
          .isEqualTo(OutlierDetection.defaults().toString());
    }
    assertThat(chooser(off).outlierDetection()).isNull();
  }

  private static AbstractPeerList chooser(Dispatcher d) {
    return (AbstractPeerList) ((HttpOutbound) d.outbounds().get("counting").unary()).chooser();
  }

  /** A server whose procedure {@code who} fails every call with {@code unavailable}; its host:port. */
  private String failingServer() {
    HttpInbound in = HttpTransport.builder().eventLoopThreads(1).build().inboundBuilder().build();
    Dispatcher d = Dispatcher.builder("counting").inbound(in).build();
    d.register(
        Raw.procedure(
            "who",
            body -> {
              throw YarpcException.of(Code.UNAVAILABLE, "under maintenance");
            }));
    d.start();
    dispatchers.add(d);
    return in.hostPort();
  }

  static Stream<Arguments> badBlocks() {
    String p = "outbounds.counting.http.";
    return Stream.of(
        Arguments.of(
            "random:\n  peers: [127.0.0.1:1]\n  capacity: 10\n",
            List.of(
                p
                    + "random.capacity: not supported: yarpc-java's random list has no initial"
                    + " capacity (it grows as peers are added); remove the key")),
        Arguments.of(
            "two-random-choices:\n  peers: [127.0.0.1:1]\n  failFast: sometimes\n",
            List.of(
                p + "two-random-choices.failFast: not a boolean (true or false): \"sometimes\"")),
        Arguments.of(
            "fewest-pending-requests:\n  peers: [127.0.0.1:1]\n  defaultChooseTimeout: 0\n",
            List.of(
                p
                    + "fewest-pending-requests.defaultChooseTimeout: defaultChooseTimeout must be"
                    + " positive: PT0S")),
        Arguments.of(
            "fewest-pending:\n  peers: [127.0.0.1:1]\n",
            List.of(
                "outbounds.counting.http: an HTTP outbound needs a url, a peer, or a peer list (e.g."
                    + " round-robin: {peers: [...]})",
                p
                    + "fewest-pending: unknown key (known keys here: addHeaders,"
                    + " fewest-pending-requests, hashring32, http2, maxResponseBodySize, peer, random,"
                    + " round-robin, tls, two-random-choices, url, with)")),
        Arguments.of(
            "hashring32:\n  peers: [127.0.0.1:1]\n  numReplicas: 0\n  offsetGeneratorValue: -1\n"
                + "  numPeersEstimate: 1500\n  offsetheader: x\n",
            List.of(
                p + "hashring32.numReplicas: numReplicas must be from 1 to 10000: 0",
                p
                    + "hashring32.offsetGeneratorValue: offsetGeneratorValue must not be negative: -1",
                p
                    + "hashring32.numPeersEstimate: not supported: yarpc-java's hashring32 list has"
                    + " no initial capacity (the ring grows as peers are added); remove the key",
                p
                    + "hashring32.offsetheader: unknown key (known keys here:"
                    + " alternateShardKeyHeader, defaultChooseTimeout, failFast, numReplicas,"
                    + " offsetGeneratorValue, offsetHeader, outlierDetection, peerOverrideHeader,"
                    + " peers, replicaDelimiter)")),
        Arguments.of(
            "round-robin:\n  peers: [127.0.0.1:1]\n  outlierDetection:\n"
                + "    consecutiveFailures: -1\n    failurePercent: 120\n    minRequests: 0\n"
                + "    interval: 0\n    baseEjectionTime: soon\n    maxEjectionTime: 1m\n"
                + "    maxEjectionPercent: 0\n    enforcingConsecutive5xx: 100\n",
            List.of(
                p
                    + "round-robin.outlierDetection.consecutiveFailures: consecutiveFailures must"
                    + " not be negative: -1",
                p
                    + "round-robin.outlierDetection.failurePercent: failurePercent must be from 0"
                    + " to 100: 120",
                p + "round-robin.outlierDetection.minRequests: minRequests must be at least 1: 0",
                p + "round-robin.outlierDetection.interval: interval must be positive: PT0S",
                p
                    + "round-robin.outlierDetection.baseEjectionTime: not a duration: \"soon\""
                    + " (not a number followed by a unit; e.g. 500ms, 1m30s)",
                p
                    + "round-robin.outlierDetection.maxEjectionPercent: maxEjectionPercent must be"
                    + " from 1 to 100: 0",
                p
                    + "round-robin.outlierDetection.enforcingConsecutive5xx: unknown key (known"
                    + " keys here: baseEjectionTime, consecutiveFailures, failurePercent, interval,"
                    + " maxEjectionPercent, maxEjectionTime, minRequests)")),
        Arguments.of(
            "hashring32:\n  peers: [127.0.0.1:1]\n  outlierDetection: {consecutiveFailures: 0}\n",
            List.of(
                p
                    + "hashring32.outlierDetection: outlier detection needs consecutiveFailures or"
                    + " failurePercent: both are 0")),
        Arguments.of(
            "random:\n  peers: [127.0.0.1:1]\n  outlierDetection:\n    baseEjectionTime: 1m\n"
                + "    maxEjectionTime: 30s\n",
            List.of(
                p
                    + "random.outlierDetection: maxEjectionTime (30s) must not be shorter than"
                    + " baseEjectionTime (1m0s)")),
        Arguments.of(
            "fewest-pending-requests:\n  peers: [127.0.0.1:1]\n  outlierDetection: true\n",
            List.of(
                p + "fewest-pending-requests.outlierDetection: expected a mapping, got a boolean")),
        Arguments.of(
            "random:\n  peers: [127.0.0.1:1]\nround-robin:\n  peers: [127.0.0.1:2]\n",
            List.of(
                "outbounds.counting.http: give one of peer, with or a peer list"
                    + " (fewest-pending-requests, hashring32, random, round-robin,"
                    + " two-random-choices), got random and round-robin")));
  }

  @ParameterizedTest
  @MethodSource("badBlocks")
  void badOptionsAreReportedAtTheirKey(String block, List<String> problems) {
    assertThat(
            Fixtures.problems(
                YarpcConfig.loader(), YarpcConfig.parse(new StringReader(outbound(block)))))
        .containsExactlyElementsOf(problems);
  }
}
