package io.yarpc.config;

import io.yarpc.peer.PeerChooser;
import io.yarpc.peer.PeerTransport;

/**
 * A peer chooser an outbound names with {@code with: NAME} instead of describing one, as yarpc-go's
 * {@code PeerChooserPreset}: for a chooser built in code (one fed by service discovery, say). Register it
 * with {@link YarpcConfig.Loader#peerChooserPreset}.
 *
 * <pre>
 * outbounds:
 *   users:
 *     grpc:
 *       with: users-discovery
 * </pre>
 */
@FunctionalInterface
public interface PeerChooserPreset {
  /**
   * A new chooser, not started, over {@code transport}'s peers, for an outbound of the transport called
   * {@code transportName} ({@code http}, {@code grpc}...). Called once for each outbound that names the
   * preset. An {@link IllegalArgumentException} is reported as a problem at the {@code with} key.
   */
  PeerChooser build(PeerTransport transport, String transportName);
}
