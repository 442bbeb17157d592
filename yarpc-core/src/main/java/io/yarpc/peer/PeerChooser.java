package io.yarpc.peer;

import io.yarpc.transport.Lifecycle;
import io.yarpc.transport.RequestMeta;
import java.util.concurrent.CompletableFuture;

/**
 * Picks the peer for each call of an outbound. Choosers only choose: the transport owns the peers, and
 * lists are fed by whoever configures them.
 */
public interface PeerChooser extends Lifecycle {
  /**
   * Chooses a peer for a call. Waits for one to become available at most until the call's deadline (or a
   * default timeout when it has none), then fails with {@code unavailable}.
   */
  CompletableFuture<PeerLease> choose(RequestMeta meta);
}
