package io.yarpc.config;

import io.yarpc.config.spi.ConfigContext;
import io.yarpc.config.spi.ConfigSection;
import io.yarpc.config.spi.PeerListSpec;
import io.yarpc.peer.PeerChooser;
import io.yarpc.peer.PeerTransport;
import io.yarpc.peer.RoundRobinPeerList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A third-party peer list, {@code recording}: builds a round-robin list and records the {@code
 * label} it was configured with, so a test sees that the block reached it.
 */
public final class RecordingPeerListSpec implements PeerListSpec {
  static final List<String> LABELS = new CopyOnWriteArrayList<>();

  /** For {@link java.util.ServiceLoader}. */
  public RecordingPeerListSpec() {}

  @Override
  public String name() {
    return "recording";
  }

  @Override
  public PeerChooser buildPeerList(
      ConfigSection config, PeerTransport transport, ConfigContext context) {
    String label = config.requireString("label");
    if (label != null) {
      LABELS.add(label);
    }
    return RoundRobinPeerList.builder(transport).build();
  }
}
