package io.yarpc.config;

import io.yarpc.config.spi.ConfigContext;
import io.yarpc.config.spi.ConfigSection;
import io.yarpc.config.spi.PeerListUpdaterSpec;
import io.yarpc.peer.PeerList;
import io.yarpc.peer.PeerListUpdater;
import io.yarpc.peer.UpdaterStatus;
import io.yarpc.transport.AbstractLifecycle;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * A third-party peer list updater, {@code fixed}: feeds its list the {@code hostPorts} of its block when
 * it starts, identified as the outbound's transport wants them.
 */
public class FixedUpdaterSpec implements PeerListUpdaterSpec {
  /** For {@link java.util.ServiceLoader}. */
  public FixedUpdaterSpec() {}

  @Override
  public String name() {
    return "fixed";
  }

  @Override
  public Function<PeerList, PeerListUpdater> buildUpdater(
      ConfigSection config, UnaryOperator<String> identify, ConfigContext context) {
    List<String> hostPorts = config.strings("hostPorts");
    if (hostPorts == null) {
      config.problem("hostPorts", "missing required key");
      return null;
    }
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < hostPorts.size(); i++) {
      String hostPort = hostPorts.get(i);
      config.apply("hostPorts[" + i + "]", () -> ids.add(identify.apply(hostPort)));
    }
    return list -> new Fixed(list, ids);
  }

  /** Adds its identifiers at start. */
  static final class Fixed extends AbstractLifecycle implements PeerListUpdater {
    private final PeerList list;
    private final List<String> ids;

    Fixed(PeerList list, List<String> ids) {
      this.list = list;
      this.ids = List.copyOf(ids);
    }

    @Override
    protected void doStart() {
      list.update(ids, List.of());
    }

    @Override
    protected void doStop() {}

    @Override
    public UpdaterStatus status() {
      return new UpdaterStatus("fixed", "the configuration", isRunning(), ids, null, null, 0);
    }
  }
}
