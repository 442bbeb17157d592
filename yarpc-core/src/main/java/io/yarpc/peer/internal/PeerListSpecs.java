package io.yarpc.peer.internal;

import io.yarpc.config.spi.ConfigContext;
import io.yarpc.config.spi.ConfigSection;
import io.yarpc.config.spi.PeerListSpec;
import io.yarpc.peer.AbstractPeerList;
import io.yarpc.peer.FewestPendingPeerList;
import io.yarpc.peer.HashRingPeerList;
import io.yarpc.peer.OutlierDetection;
import io.yarpc.peer.PeerChooser;
import io.yarpc.peer.PeerTransport;
import io.yarpc.peer.RandomPeerList;
import io.yarpc.peer.RoundRobinPeerList;
import io.yarpc.peer.TwoRandomChoicesPeerList;
import java.util.function.Consumer;

/**
 * The peer-list blocks of an outbound section, one spec per provided list, under yarpc-go's names, each
 * registered through {@code META-INF/services/io.yarpc.config.spi.PeerListSpec}. Every list reads {@code
 * failFast} and {@code defaultChooseTimeout} (yarpc-go has both only on some lists; they mean the same on
 * all of them here) and an {@code outlierDetection} block (yarpc-java's; {@link OutlierDetection}), and
 * refuses yarpc-go's {@code capacity}, an allocation hint with no counterpart.
 * {@code hashring32} reads its ring options too.
 */
public final class PeerListSpecs {
  private PeerListSpecs() {}

  /** {@code round-robin}: a {@link RoundRobinPeerList}. */
  public static final class RoundRobin implements PeerListSpec {
    /** For {@link java.util.ServiceLoader}. */
    public RoundRobin() {}

    @Override
    public String name() {
      return RoundRobinPeerList.NAME;
    }

    @Override
    public PeerChooser buildPeerList(
        ConfigSection config, PeerTransport transport, ConfigContext context) {
      return common(config, RoundRobinPeerList.builder(transport), name()).build();
    }
  }

  /** {@code fewest-pending-requests}: a {@link FewestPendingPeerList}. */
  public static final class FewestPending implements PeerListSpec {
    /** For {@link java.util.ServiceLoader}. */
    public FewestPending() {}

    @Override
    public String name() {
      return FewestPendingPeerList.NAME;
    }

    @Override
    public PeerChooser buildPeerList(
        ConfigSection config, PeerTransport transport, ConfigContext context) {
      return common(config, FewestPendingPeerList.builder(transport), name()).build();
    }
  }

  /** {@code random}: a {@link RandomPeerList}. */
  public static final class Random implements PeerListSpec {
    /** For {@link java.util.ServiceLoader}. */
    public Random() {}

    @Override
    public String name() {
      return RandomPeerList.NAME;
    }

    @Override
    public PeerChooser buildPeerList(
        ConfigSection config, PeerTransport transport, ConfigContext context) {
      return common(config, RandomPeerList.builder(transport), name()).build();
    }
  }

  /** {@code two-random-choices}: a {@link TwoRandomChoicesPeerList}. */
  public static final class TwoRandomChoices implements PeerListSpec {
    /** For {@link java.util.ServiceLoader}. */
    public TwoRandomChoices() {}

    @Override
    public String name() {
      return TwoRandomChoicesPeerList.NAME;
    }

    @Override
    public PeerChooser buildPeerList(
        ConfigSection config, PeerTransport transport, ConfigContext context) {
      return common(config, TwoRandomChoicesPeerList.builder(transport), name()).build();
    }
  }

  /**
   * {@code hashring32}: a {@link HashRingPeerList} with yarpc-go's keys {@code numReplicas}, {@code
   * replicaDelimiter}, {@code offsetHeader}, {@code offsetGeneratorValue}, {@code peerOverrideHeader}
   * and {@code alternateShardKeyHeader} (an empty header name, Go's unset value, sets nothing); {@code
   * numPeersEstimate}, an allocation hint, is refused as {@code capacity} is.
   */
  public static final class HashRing implements PeerListSpec {
    /** For {@link java.util.ServiceLoader}. */
    public HashRing() {}

    @Override
    public String name() {
      return HashRingPeerList.NAME;
    }

    @Override
    public PeerChooser buildPeerList(
        ConfigSection config, PeerTransport transport, ConfigContext context) {
      HashRingPeerList.Builder b = common(config, HashRingPeerList.builder(transport), name());
      config.integer("numReplicas", b::numReplicas);
      config.string("replicaDelimiter", b::replicaDelimiter);
      header(config, "offsetHeader", b::offsetHeader);
      config.integer("offsetGeneratorValue", b::offsetGeneratorValue);
      header(config, "peerOverrideHeader", b::peerOverrideHeader);
      header(config, "alternateShardKeyHeader", b::alternateShardKeyHeader);
      config.unsupported(
          "numPeersEstimate",
          "yarpc-java's hashring32 list has no initial capacity (the ring grows as peers are added);"
              + " remove the key");
      return b.build();
    }

    private static void header(ConfigSection config, String key, Consumer<String> setter) {
      String name = config.string(key);
      if (name != null && !name.isEmpty()) {
        config.apply(key, () -> setter.accept(name));
      }
    }
  }

  /** Reads the keys every list has into {@code b}. */
  private static <B extends AbstractPeerList.Builder<B, ?>> B common(
      ConfigSection config, B b, String name) {
    config.bool("failFast", b::failFast);
    config.duration("defaultChooseTimeout", b::defaultChooseTimeout);
    ConfigSection outliers = config.section("outlierDetection");
    if (outliers != null) {
      OutlierDetection settings = outlierDetection(outliers);
      if (settings != null) {
        b.outlierDetection(settings);
      }
    }
    config.unsupported(
        "capacity",
        "yarpc-java's "
            + name
            + " list has no initial capacity (it grows as peers are added); remove the key");
    return b;
  }

  /**
   * An {@code outlierDetection} block: {@link OutlierDetection}'s builder names, durations in Go's
   * syntax; {@code outlierDetection: {}} turns it on with the defaults. Null when a value was refused
   * (the problem is recorded at its key, or at the block for a combination).
   */
  private static OutlierDetection outlierDetection(ConfigSection block) {
    OutlierDetection.Builder b = OutlierDetection.builder();
    block.integer("consecutiveFailures", b::consecutiveFailures);
    block.integer("failurePercent", b::failurePercent);
    block.integer("minRequests", b::minRequests);
    block.duration("interval", b::interval);
    block.duration("baseEjectionTime", b::baseEjectionTime);
    block.duration("maxEjectionTime", b::maxEjectionTime);
    block.integer("maxEjectionPercent", b::maxEjectionPercent);
    if (block.hasProblems()) {
      return null;
    }
    OutlierDetection[] built = new OutlierDetection[1];
    block.apply(null, () -> built[0] = b.build());
    return built[0];
  }
}
