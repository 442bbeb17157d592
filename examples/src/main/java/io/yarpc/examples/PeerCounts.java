package io.yarpc.examples;

import io.yarpc.config.YarpcConfig;
import io.yarpc.config.spi.ConfigContext;
import io.yarpc.config.spi.ConfigSection;
import io.yarpc.config.spi.PeerListSpec;
import io.yarpc.peer.ChooserStatus;
import io.yarpc.peer.PeerChooser;
import io.yarpc.peer.PeerLease;
import io.yarpc.peer.PeerList;
import io.yarpc.peer.PeerTransport;
import io.yarpc.transport.RequestMeta;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * How many calls each peer got, counted on the client as its peer lists hand out leases: the benchmark's
 * calls per peer. {@link #install} has a loader build every peer list (every {@link PeerListSpec} on the
 * class path, under its own name) wrapped in a list that counts the leases it gives, so a list named by
 * {@code call}'s flags and one in a configuration file are counted alike. A chooser that is not a list
 * (a single {@code peer}, a preset) is not counted. Thread-safe.
 */
final class PeerCounts {
  private final Map<String, LongAdder> counts = new ConcurrentHashMap<>();
  private volatile boolean counting; // a counted list was built

  /** Has {@code loader} wrap every peer list it builds so that its leases are counted here. */
  void install(YarpcConfig.Loader loader) {
    for (PeerListSpec list :
        ServiceLoader.load(PeerListSpec.class, PeerCounts.class.getClassLoader())) {
      loader.peerListSpec(new CountingSpec(list, this));
    }
  }

  /** The names of the peer lists on the class path ({@code round-robin}, ...), in their order. */
  static List<String> listNames() {
    return ServiceLoader.load(PeerListSpec.class, PeerCounts.class.getClassLoader()).stream()
        .map(p -> p.get().name())
        .toList();
  }

  /** The leases given so far, by peer identifier. */
  Map<String, Long> snapshot() {
    Map<String, Long> snapshot = new HashMap<>();
    counts.forEach((peer, n) -> snapshot.put(peer, n.sum()));
    return snapshot;
  }

  /** Whether a peer list was built to count into this (the outbound's chooser is not a list else). */
  boolean counting() {
    return counting;
  }

  /** Forgets the counts (after a warm-up). */
  void reset() {
    counts.clear();
  }

  private void count(PeerLease lease) {
    counts.computeIfAbsent(lease.peer().identifier(), p -> new LongAdder()).increment();
  }

  /** A spec that builds what {@code delegate} builds, counted. */
  private static final class CountingSpec implements PeerListSpec {
    private final PeerListSpec delegate;
    private final PeerCounts counts;

    CountingSpec(PeerListSpec delegate, PeerCounts counts) {
      this.delegate = delegate;
      this.counts = counts;
    }

    @Override
    public String name() {
      return delegate.name();
    }

    @Override
    public PeerChooser buildPeerList(
        ConfigSection config, PeerTransport transport, ConfigContext context) {
      PeerChooser built = delegate.buildPeerList(config, transport, context);
      if (!(built instanceof PeerList)) {
        return built; // the loader reports it
      }
      counts.counting = true;
      return new CountingList(built, counts);
    }
  }

  /**
   * A peer list that counts the leases of the one it wraps: choices, membership, lifecycle and
   * introspection are the wrapped list's. The future a choice returns is the wrapped list's own, so a
   * caller's cancellation reaches it.
   */
  private static final class CountingList implements PeerChooser, PeerList {
    private final PeerChooser chooser;
    private final PeerList list;
    private final PeerCounts counts;

    CountingList(PeerChooser list, PeerCounts counts) {
      this.chooser = list;
      this.list = (PeerList) list;
      this.counts = counts;
    }

    @Override
    public CompletableFuture<PeerLease> choose(RequestMeta meta) {
      CompletableFuture<PeerLease> chosen = chooser.choose(meta);
      chosen.thenAccept(counts::count);
      return chosen;
    }

    @Override
    public void update(List<String> additions, List<String> removals) {
      list.update(additions, removals);
    }

    @Override
    public String waitReason() {
      return chooser.waitReason();
    }

    @Override
    public ChooserStatus introspect() {
      return chooser.introspect();
    }

    @Override
    public void start() {
      chooser.start();
    }

    @Override
    public void stop() {
      chooser.stop();
    }

    @Override
    public boolean isRunning() {
      return chooser.isRunning();
    }

    @Override
    public String toString() {
      return chooser.toString();
    }
  }
}
