package io.yarpc.transport.http;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.CallOptions;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.peer.ConnectionStatus;
import io.yarpc.peer.OutlierDetection;
import io.yarpc.peer.PeerStatus;
import io.yarpc.peer.RoundRobinPeerList;
import io.yarpc.testing.TcpProxy;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Outlier ejection over real HTTP: a client calls three real servers on loopback through a round-robin
 * list with outlier detection. One server fails every call (with {@code unavailable} or {@code
 * internal}), or sits behind a black-holed {@link TcpProxy} so its calls run into their deadline: after
 * a few failures it is ejected, later calls go to the healthy two, introspection says why, and once the
 * server is fixed it returns through a probe call when its ejection ends. Nothing asserts how long
 * anything takes; waits are bounded.
 */
@Timeout(120)
class OutlierEjectionTest {
  private final List<Runnable> cleanup = new ArrayList<>();
  private final Map<String, AtomicInteger> served = new HashMap<>(); // server name -> calls
  private RoundRobinPeerList list;

  @AfterEach
  void stop() {
    for (int i = cleanup.size() - 1; i >= 0; i--) {
      cleanup.get(i).run();
    }
  }

  /** A server that answers {@code who} with its name, or fails with {@code failWith} when it is set. */
  private String server(String name, AtomicReference<Code> failWith) {
    HttpInbound in = HttpTransport.builder().eventLoopThreads(1).build().inboundBuilder().build();
    Dispatcher d = Dispatcher.builder("backend").inbound(in).build();
    AtomicInteger count = new AtomicInteger();
    d.register(
        Raw.procedure(
            "who",
            body -> {
              count.incrementAndGet();
              Code code = failWith.get();
              if (code != null) {
                throw YarpcException.of(code, name + " is broken");
              }
              return name.getBytes(UTF_8);
            }));
    d.start();
    cleanup.add(d::stop);
    served.put(name, count);
    return in.hostPort();
  }

  /** A client of {@code peers} through a round-robin list with {@code detection}, once all are up. */
  private RawClient client(List<String> peers, OutlierDetection detection) throws Exception {
    HttpTransport transport = HttpTransport.builder().eventLoopThreads(1).build();
    list = RoundRobinPeerList.builder(transport).peers(peers).outlierDetection(detection).build();
    Dispatcher d =
        Dispatcher.builder("client")
            .outbound("backend", Outbounds.unary(transport.outboundBuilder(list).build()))
            .build();
    d.start();
    cleanup.add(d::stop);
    await("every peer in rotation", () -> list.availablePeers().size() == peers.size());
    return RawClient.of(d.clientConfig("backend"));
  }

  /** The server's name, or the error's code and message. */
  private static String call(RawClient client, Duration timeout) throws Exception {
    try {
      byte[] reply =
          client
              .call("who", new byte[0], CallOptions.builder().timeout(timeout).build())
              .get(20, TimeUnit.SECONDS);
      return new String(reply, UTF_8);
    } catch (ExecutionException e) {
      YarpcException error = YarpcException.from(e.getCause());
      return error.code().wireName() + ": " + error.getMessage();
    }
  }

  private PeerStatus status(String hostPort) {
    return list.introspect().peers().stream()
        .filter(p -> p.identifier().equals(hostPort))
        .findFirst()
        .orElseThrow();
  }

  private static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime() - deadline).as("waiting for: " + what).isNegative();
      Thread.sleep(10);
    }
  }

  private Map<String, Integer> servedCounts() {
    Map<String, Integer> counts = new HashMap<>();
    served.forEach((name, n) -> counts.put(name, n.get()));
    return counts;
  }

  @ParameterizedTest
  @EnumSource(
      value = Code.class,
      names = {"UNAVAILABLE", "INTERNAL"})
  void aServerThatFailsEveryCallIsEjectedAndReturnsThroughAProbeOnceFixed(Code code)
      throws Exception {
    AtomicReference<Code> broken = new AtomicReference<>(code);
    String good1 = server("good-1", new AtomicReference<>());
    String good2 = server("good-2", new AtomicReference<>());
    String bad = server("bad", broken);
    RawClient client =
        client(
            List.of(good1, good2, bad),
            OutlierDetection.builder()
                .consecutiveFailures(3)
                .baseEjectionTime(Duration.ofSeconds(2))
                .build());
    Duration timeout = Duration.ofSeconds(10);

    // round-robin: every third call reaches the broken server until its third failure ejects it
    List<String> failures = new ArrayList<>();
    for (int i = 0; i < 100 && status(bad).status() == ConnectionStatus.AVAILABLE; i++) {
      String answer = call(client, timeout);
      if (!answer.startsWith("good-")) {
        failures.add(answer);
      }
    }
    String expected = code.wireName() + ": bad is broken";
    assertThat(failures).containsExactly(expected, expected, expected);
    assertThat(served.get("bad").get()).isEqualTo(3);
    PeerStatus ejected = status(bad);
    assertThat(ejected.status()).isEqualTo(ConnectionStatus.UNAVAILABLE);
    assertThat(ejected.unavailableReason())
        .startsWith("ejected for 2s after 3 consecutive failures (last: " + expected + ")");
    assertThat(list.availablePeers()).containsExactlyInAnyOrder(good1, good2);

    // later calls go to the healthy two; only a probe (should the ejection end meanwhile) reaches
    // bad
    int badBefore = served.get("bad").get();
    int phaseFailures = 0;
    for (int i = 0; i < 30; i++) {
      if (!call(client, timeout).startsWith("good-")) {
        phaseFailures++;
      }
    }
    int probes = served.get("bad").get() - badBefore;
    assertThat(phaseFailures).as("failures after the ejection").isEqualTo(probes);
    assertThat(probes).as("probes of the broken server in 30 calls").isLessThanOrEqualTo(1);

    // fixed: when its ejection ends it is back on probation, and the next call it gets restores it
    broken.set(null);
    await("bad on probation", () -> list.availablePeers().contains(bad));
    String probe = null;
    for (int i = 0; i < 10 && probe == null; i++) {
      String answer = call(client, timeout);
      assertThat(answer).isIn("good-1", "good-2", "bad");
      probe = answer.equals("bad") ? answer : null;
    }
    assertThat(probe).as("a probe call answered by bad").isNotNull();
    assertThat(status(bad)).isEqualTo(new PeerStatus(bad, ConnectionStatus.AVAILABLE, null, 0));

    Map<String, Integer> before = servedCounts();
    for (int i = 0; i < 30; i++) {
      assertThat(call(client, timeout)).isIn("good-1", "good-2", "bad");
    }
    Map<String, Integer> after = servedCounts();
    assertThat(after.get("bad") - before.get("bad")).as("bad's share again").isEqualTo(10);
  }

  @Test
  void aBlackHoledServerIsEjectedWhenItsCallsRunIntoTheirDeadline() throws Exception {
    String good1 = server("good-1", new AtomicReference<>());
    String good2 = server("good-2", new AtomicReference<>());
    String target = server("hidden", new AtomicReference<>());
    TcpProxy proxy =
        TcpProxy.start(new InetSocketAddress("127.0.0.1", Integer.parseInt(target.split(":")[1])));
    cleanup.add(proxy::close);
    String hidden = proxy.hostPort();
    RawClient client =
        client(
            List.of(good1, good2, hidden),
            OutlierDetection.builder()
                .consecutiveFailures(2)
                .baseEjectionTime(Duration.ofSeconds(1))
                .build());
    assertThat(call(client, Duration.ofSeconds(10))).startsWith("good-");

    proxy.blackHole(); // the connection stays open; nothing gets through
    // long enough that a good server's answer makes it on a loaded machine
    Duration shortDeadline = Duration.ofSeconds(2);
    List<String> failures = new ArrayList<>();
    for (int i = 0; i < 100 && status(hidden).status() == ConnectionStatus.AVAILABLE; i++) {
      String answer = call(client, shortDeadline);
      if (!answer.startsWith("good-")) {
        failures.add(answer);
      }
    }
    assertThat(failures)
        .hasSize(2)
        .allMatch(f -> f.startsWith("deadline-exceeded: client timeout"));
    assertThat(status(hidden).unavailableReason())
        .startsWith(
            "ejected for 1s after 2 consecutive failures (last: deadline-exceeded: the call's"
                + " deadline passed before an answer)");
    assertThat(list.availablePeers()).containsExactlyInAnyOrder(good1, good2);
    for (int i = 0; i < 10; i++) {
      String answer = call(client, shortDeadline);
      assertThat(answer.startsWith("good-") || answer.startsWith("deadline-exceeded"))
          .as(answer)
          .isTrue();
    }

    // the path heals: after its ejection a probe call gets through and restores it
    proxy.forward();
    await(
        "a probe call answered by the hidden server",
        () -> {
          try {
            return call(client, Duration.ofSeconds(5)).equals("hidden");
          } catch (Exception e) {
            throw new AssertionError(e);
          }
        });
    assertThat(status(hidden))
        .isEqualTo(new PeerStatus(hidden, ConnectionStatus.AVAILABLE, null, 0));
    Map<String, Integer> before = servedCounts();
    for (int i = 0; i < 30; i++) {
      assertThat(call(client, Duration.ofSeconds(10))).isIn("good-1", "good-2", "hidden");
    }
    assertThat(servedCounts().get("hidden") - before.get("hidden"))
        .as("the hidden server's share again")
        .isPositive();
  }
}
