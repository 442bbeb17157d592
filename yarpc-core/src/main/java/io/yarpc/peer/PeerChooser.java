package io.yarpc.peer;

import io.yarpc.transport.Lifecycle;
import io.yarpc.transport.RequestMeta;
import java.util.List;
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

  /**
   * Why a choice would wait now, for the error of a call whose deadline passes while it waits (e.g.
   * {@code peer 127.0.0.1:8080 is unreachable: Connection refused}); null when no choice waits or the
   * reason is unknown. The default returns null.
   */
  default String waitReason() {
    return null;
  }

  /**
   * What the chooser holds now, for introspection ({@link io.yarpc.Dispatcher#introspect()}, the admin
   * page): its kind and, for each peer it may choose, the peer's status, unavailable reason and pending
   * requests. An implementation MUST be thread-safe, MUST NOT block (it may take its own locks briefly,
   * and SHOULD read peers' status outside them, as transports may guard status with locks of their own)
   * and MUST return a snapshot the caller may keep. The default names the chooser by its class's simple
   * name and lists no peers, so choosers written before this method keep compiling.
   */
  default ChooserStatus introspect() {
    String kind = getClass().getSimpleName();
    return new ChooserStatus(kind.isEmpty() ? getClass().getName() : kind, List.of());
  }
}
