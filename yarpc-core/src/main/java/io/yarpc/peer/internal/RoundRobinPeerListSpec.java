package io.yarpc.peer.internal;

import io.yarpc.config.spi.ConfigContext;
import io.yarpc.config.spi.ConfigSection;
import io.yarpc.config.spi.PeerListSpec;
import io.yarpc.peer.PeerChooser;
import io.yarpc.peer.PeerTransport;
import io.yarpc.peer.RoundRobinPeerList;

/**
 * The {@code round-robin} block of an outbound: a {@link RoundRobinPeerList} with yarpc-go's keys {@code
 * failFast} and {@code defaultChooseTimeout} (its {@code capacity}, an allocation hint, has no
 * counterpart here and is refused). Registered through {@code META-INF/services}.
 */
public final class RoundRobinPeerListSpec implements PeerListSpec {
  /** For {@link java.util.ServiceLoader}. */
  public RoundRobinPeerListSpec() {}

  @Override
  public String name() {
    return RoundRobinPeerList.NAME;
  }

  @Override
  public PeerChooser buildPeerList(
      ConfigSection config, PeerTransport transport, ConfigContext context) {
    RoundRobinPeerList.Builder b = RoundRobinPeerList.builder(transport);
    config.bool("failFast", b::failFast);
    config.duration("defaultChooseTimeout", b::defaultChooseTimeout);
    if (config.has("capacity")) {
      config.problem(
          "capacity",
          "not supported: yarpc-java's round-robin list has no initial capacity (it grows as peers are"
              + " added); remove the key");
    }
    return b.build();
  }
}
