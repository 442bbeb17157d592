package io.yarpc.peer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Headers;
import io.yarpc.transport.RequestMeta;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * The hot path: a choice allocates the same with every strategy as with round-robin (the lease and its
 * future; the strategy itself nothing), and outlier detection (counting each call's outcome) adds
 * nothing, measured with the JVM's per-thread allocation counter.
 */
class PeerListAllocationTest {
  private static final int WARM_UP = 60_000;
  private static final int MEASURED = 20_000;
  private static final YarpcException FAILURE = YarpcException.of(Code.INTERNAL, "failed");

  @Test
  void noStrategyAllocatesMorePerChoiceThanRoundRobin() {
    com.sun.management.ThreadMXBean mx =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    assumeTrue(mx.isThreadAllocatedMemorySupported());
    RequestMeta[] metas = new RequestMeta[64];
    for (int i = 0; i < metas.length; i++) {
      metas[i] =
          RequestMeta.builder()
              .service("svc")
              .procedure("p")
              .shardKey("user-" + i)
              .headers(Headers.of("x-offset", String.valueOf(i % 3), "x-peer", "nobody:0"))
              .build();
    }
    Map<String, Function<PeerTransport, AbstractPeerList.Builder<?, ?>>> lists =
        new LinkedHashMap<>();
    lists.put(RoundRobinPeerList.NAME, RoundRobinPeerList::builder);
    lists.put(FewestPendingPeerList.NAME, FewestPendingPeerList::builder);
    lists.put(RandomPeerList.NAME, RandomPeerList::builder);
    lists.put(TwoRandomChoicesPeerList.NAME, TwoRandomChoicesPeerList::builder);
    lists.put(HashRingPeerList.NAME, HashRingPeerList::builder);
    lists.put(
        HashRingPeerList.NAME + " with headers",
        t -> HashRingPeerList.builder(t).offsetHeader("X-Offset").peerOverrideHeader("X-Peer"));
    lists.put(
        RoundRobinPeerList.NAME + " with outlier detection",
        t ->
            RoundRobinPeerList.builder(t)
                .outlierDetection(OutlierDetection.builder().failurePercent(50).build()));

    List<String> peers = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      peers.add("10.0.0." + i + ":80");
    }
    Map<String, Long> bytesPerChoice = new LinkedHashMap<>();
    PeerLease[] held = new PeerLease[8]; // leases escape, as they do in a real call
    FakePeerTransport transport = new FakePeerTransport();
    for (Map.Entry<String, Function<PeerTransport, AbstractPeerList.Builder<?, ?>>> e :
        lists.entrySet()) {
      AbstractPeerList list = e.getValue().apply(transport).peers(peers).build();
      list.start();
      try {
        run(list, metas, held, WARM_UP);
        long before = mx.getCurrentThreadAllocatedBytes();
        run(list, metas, held, MEASURED);
        bytesPerChoice.put(e.getKey(), (mx.getCurrentThreadAllocatedBytes() - before) / MEASURED);
      } finally {
        list.stop();
      }
    }

    long roundRobin = bytesPerChoice.get(RoundRobinPeerList.NAME);
    assertThat(roundRobin).as("round-robin's bytes per choice").isPositive();
    assertThat(bytesPerChoice.values())
        .as("bytes per choice: %s", bytesPerChoice)
        .allSatisfy(b -> assertThat(b).isLessThanOrEqualTo(roundRobin + 8));
  }

  private static void run(AbstractPeerList list, RequestMeta[] metas, PeerLease[] held, int n) {
    for (int i = 0; i < n; i++) {
      int slot = i & (held.length - 1);
      if (held[slot] != null) {
        // every peer fails a third of its calls: counted, but too few to eject
        held[slot].finish(i % 3 == 0 ? FAILURE : null);
      }
      held[slot] = list.choose(metas[i & (metas.length - 1)]).join();
    }
    for (int i = 0; i < held.length; i++) {
      held[i].finish(null);
      held[i] = null;
    }
  }
}
