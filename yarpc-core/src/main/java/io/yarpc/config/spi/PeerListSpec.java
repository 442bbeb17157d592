package io.yarpc.config.spi;

import io.yarpc.peer.PeerChooser;
import io.yarpc.peer.PeerTransport;

/**
 * How one kind of peer list is configured: the block named {@link #name()} inside an outbound section, as
 * yarpc-go's {@code yarpcconfig.PeerListSpec}.
 *
 * <pre>
 * outbounds:
 *   keyvalue:
 *     grpc:
 *       round-robin:
 *         peers: [127.0.0.1:8080, 127.0.0.1:8081]
 *         failFast: true
 * </pre>
 *
 * <p>The block holds the list's own keys and one updater: the static {@code peers} list, which the loader
 * reads itself and feeds to the list through {@link io.yarpc.peer.PeerList#update} before the list starts,
 * or the block of a registered {@link PeerListUpdaterSpec} ({@code dns: {...}}), which the loader binds to
 * the list.
 * Implementations are found with {@link java.util.ServiceLoader} ({@code
 * META-INF/services/io.yarpc.config.spi.PeerListSpec}) or registered with the loader; the contract of
 * {@link TransportSpec} about problems and state applies.
 */
public interface PeerListSpec {
  /** The block's key, e.g. {@code round-robin}. */
  String name();

  /**
   * Builds the list, not started, over {@code transport}'s peers; {@code config} is the block without its
   * updater's key. The result MUST also implement {@link io.yarpc.peer.PeerList}.
   */
  PeerChooser buildPeerList(ConfigSection config, PeerTransport transport, ConfigContext context);
}
