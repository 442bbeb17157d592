package io.yarpc.transport.http;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.Dispatcher;
import io.yarpc.peer.AbstractPeerList;
import io.yarpc.peer.FewestPendingPeerList;
import io.yarpc.peer.HashRingPeerList;
import io.yarpc.peer.PeerTransport;
import io.yarpc.peer.RoundRobinPeerList;
import io.yarpc.peer.TwoRandomChoicesPeerList;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * How the peer lists spread real calls: an HTTP client calls three (or four) real HTTP servers on
 * loopback through each list, with several calls in flight, and each server's handler counts what it
 * serves. One server ("slow") answers after a delay. Assertions compare counts with generous margins;
 * nothing depends on how long a call takes beyond the slow server being far slower than the others.
 */
@Timeout(120)
class PeerListDistributionTest {
  private static final Duration SLOW = Duration.ofMillis(300);
  private static final int IN_FLIGHT = 6;

  private final HttpTransport client = HttpTransport.builder().eventLoopThreads(1).build();
  private final ScheduledExecutorService delays = Executors.newSingleThreadScheduledExecutor();
  private final List<Dispatcher> servers = new ArrayList<>();
  private final Map<String, String> names = new HashMap<>(); // host:port -> server name
  private final Map<String, AtomicInteger> served = new LinkedHashMap<>(); // server name -> calls

  @AfterEach
  void stop() {
    client.stop();
    servers.forEach(Dispatcher::stop);
    delays.shutdownNow();
  }

  /** A server named {@code name} that counts its calls and answers with its name after {@code delay}. */
  private String server(String name, Duration delay) {
    HttpInbound in = HttpTransport.builder().eventLoopThreads(1).build().inboundBuilder().build();
    Dispatcher d = Dispatcher.builder("counting").inbound(in).build();
    AtomicInteger count = new AtomicInteger();
    d.register(
        Procedure.builder("who")
            .unary(
                r -> {
                  count.incrementAndGet();
                  Response reply = Response.of(Body.of(name.getBytes(UTF_8)));
                  if (delay.isZero()) {
                    return CompletableFuture.completedFuture(reply);
                  }
                  CompletableFuture<Response> later = new CompletableFuture<>();
                  delays.schedule(
                      () -> later.complete(reply), delay.toMillis(), TimeUnit.MILLISECONDS);
                  return later;
                })
            .build());
    d.start();
    servers.add(d);
    served.put(name, count);
    names.put(in.hostPort(), name);
    return in.hostPort();
  }

  /** Three servers, the last of them slow; their addresses. */
  private List<String> fastFastSlow() {
    return List.of(
        server("fast-1", Duration.ZERO), server("fast-2", Duration.ZERO), server("slow", SLOW));
  }

  /** The list over {@code peers}, started behind an outbound, once every peer is in rotation. */
  private HttpOutbound outbound(
      Function<PeerTransport, AbstractPeerList.Builder<?, ?>> builder, List<String> peers)
      throws InterruptedException {
    AbstractPeerList list = builder.apply(client).peers(peers).build();
    HttpOutbound out = client.outbound(list);
    out.start();
    for (int i = 0; i < 1_000 && list.availablePeers().size() < peers.size(); i++) {
      Thread.sleep(10);
    }
    assertThat(list.availablePeers()).containsExactlyInAnyOrderElementsOf(peers);
    return out;
  }

  private static RequestMeta meta(String shardKey) {
    return RequestMeta.builder()
        .caller("client")
        .service("counting")
        .procedure("who")
        .encoding("raw")
        .shardKey(shardKey)
        .deadline(Deadline.after(Duration.ofSeconds(20)))
        .build();
  }

  /** Makes {@code calls} calls, {@value #IN_FLIGHT} at a time; returns the calls each server served. */
  private Map<String, Integer> drive(HttpOutbound out, int calls) throws Exception {
    served.values().forEach(c -> c.set(0));
    Semaphore slots = new Semaphore(IN_FLIGHT);
    List<CompletableFuture<String>> all = new ArrayList<>();
    for (int i = 0; i < calls; i++) {
      assertThat(slots.tryAcquire(30, TimeUnit.SECONDS)).as("a free slot").isTrue();
      all.add(
          out.call(Request.of(meta(""), Body.empty()))
              .thenApply(PeerListDistributionTest::text)
              .whenComplete((name, error) -> slots.release()));
    }
    for (CompletableFuture<String> c : all) {
      assertThat(c.get(30, TimeUnit.SECONDS)).isIn(served.keySet());
    }
    Map<String, Integer> counts = new LinkedHashMap<>();
    served.forEach((name, count) -> counts.put(name, count.get()));
    assertThat(counts.values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(calls);
    return counts;
  }

  private static String text(Response r) {
    try {
      return new String(r.body().toByteArray(), UTF_8);
    } finally {
      r.body().release();
    }
  }

  private String call(HttpOutbound out, String shardKey) throws Exception {
    return text(out.call(Request.of(meta(shardKey), Body.empty())).get(20, TimeUnit.SECONDS));
  }

  @Test
  void roundRobinSendsEveryServerTheSameShareEvenASlowOne() throws Exception {
    HttpOutbound out = outbound(RoundRobinPeerList::builder, fastFastSlow());
    Map<String, Integer> counts = drive(out, 60);
    assertThat(counts.values()).allSatisfy(n -> assertThat(n).isBetween(18, 22));
    out.stop();
  }

  @Test
  void fewestPendingSendsTheSlowServerFarFewerCalls() throws Exception {
    HttpOutbound out = outbound(FewestPendingPeerList::builder, fastFastSlow());
    Map<String, Integer> counts = drive(out, 300);
    int slow = counts.get("slow");
    assertThat(slow).isPositive();
    assertThat(slow * 3).isLessThan(Math.min(counts.get("fast-1"), counts.get("fast-2")));
    out.stop();
  }

  @Test
  void twoRandomChoicesSendsTheSlowServerFewerCalls() throws Exception {
    HttpOutbound out = outbound(TwoRandomChoicesPeerList::builder, fastFastSlow());
    Map<String, Integer> counts = drive(out, 300);
    int slow = counts.get("slow");
    assertThat(slow).isPositive();
    assertThat(slow * 2).isLessThan(Math.min(counts.get("fast-1"), counts.get("fast-2")));
    out.stop();
  }

  @Test
  void hashRingKeepsEachKeyOnOneServerAndRemovingOneMovesOnlyItsKeys() throws Exception {
    List<String> peers = new ArrayList<>();
    for (int i = 1; i <= 4; i++) {
      peers.add(server("server-" + i, Duration.ZERO));
    }
    HttpOutbound out = outbound(HashRingPeerList::builder, peers);
    HashRingPeerList list = (HashRingPeerList) out.chooser();

    Map<String, String> owners = new LinkedHashMap<>();
    for (int k = 0; k < 120; k++) {
      owners.put("user-" + k, call(out, "user-" + k));
    }
    for (int k = 0; k < 120; k += 3) {
      assertThat(call(out, "user-" + k)).as("user-%s again", k).isEqualTo(owners.get("user-" + k));
    }
    Map<String, Integer> perServer = new HashMap<>();
    owners.values().forEach(s -> perServer.merge(s, 1, Integer::sum));
    assertThat(perServer).hasSize(4);
    assertThat(perServer.values()).allSatisfy(n -> assertThat(n).isGreaterThanOrEqualTo(10));

    String removed = peers.get(2);
    String removedName = names.get(removed);
    list.update(List.of(), List.of(removed));
    int moved = 0;
    for (Map.Entry<String, String> e : owners.entrySet()) {
      String now = call(out, e.getKey());
      if (e.getValue().equals(removedName)) {
        assertThat(now).isNotEqualTo(removedName);
        moved++;
      } else {
        assertThat(now).as("owner of %s", e.getKey()).isEqualTo(e.getValue());
      }
    }
    assertThat(moved).isEqualTo(perServer.get(removedName));

    list.update(List.of(removed), List.of());
    for (int i = 0; i < 1_000 && list.availablePeers().size() < 4; i++) {
      Thread.sleep(10);
    }
    for (Map.Entry<String, String> e : owners.entrySet()) {
      assertThat(call(out, e.getKey())).as("owner of %s", e.getKey()).isEqualTo(e.getValue());
    }
    out.stop();
    assertThat(client.peers()).isEmpty();
  }
}
