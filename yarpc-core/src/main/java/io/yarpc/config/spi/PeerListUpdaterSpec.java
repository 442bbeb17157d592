package io.yarpc.config.spi;

import io.yarpc.peer.PeerList;
import io.yarpc.peer.PeerListUpdater;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * How one kind of peer list updater is configured: the block named {@link #name()} inside a peer-list
 * block, in place of the static {@code peers}, as yarpc-go's {@code yarpcconfig.PeerListUpdaterSpec}.
 *
 * <pre>
 * outbounds:
 *   users:
 *     http:
 *       round-robin:
 *         failFast: true          # the list's own keys
 *         dns:                    # one updater
 *           name: _http._tcp.users.default.svc.cluster.local
 *           record: SRV
 * </pre>
 *
 * <p>The loader builds the list, then binds the updater to it and gives the outbound a {@link
 * io.yarpc.peer.BoundPeerChooser} of the two. Implementations are found with {@link
 * java.util.ServiceLoader} ({@code META-INF/services/io.yarpc.config.spi.PeerListUpdaterSpec}) or
 * registered with the loader; the contract of {@link TransportSpec} about problems and state applies:
 * read the block, report problems at its keys, start nothing. The name may not be {@code peers} (the
 * static list's key) and should not be a key a peer list reads.
 */
public interface PeerListUpdaterSpec {
  /** The block's key, e.g. {@code dns}. */
  String name();

  /**
   * Reads the updater's block and returns how to bind it to a list: a function the loader calls once,
   * with the list the block feeds, that builds the updater (not started). Returns null when problems
   * leave nothing to build.
   *
   * @param config the updater's block
   * @param identify turns each {@code host:port} the updater finds into the identifier the outbound's
   *     transport retains ({@code 10.0.0.1:443} into {@code https://10.0.0.1:443}), as for the static
   *     {@code peers}; it throws {@link IllegalArgumentException} for what is not {@code host:port}
   * @param context the load's shared pieces
   */
  Function<PeerList, PeerListUpdater> buildUpdater(
      ConfigSection config, UnaryOperator<String> identify, ConfigContext context);
}
