package io.yarpc.peer;

import static java.util.Objects.requireNonNull;

import io.yarpc.transport.AbstractLifecycle;
import io.yarpc.transport.RequestMeta;
import java.util.concurrent.CompletableFuture;

/**
 * A peer list and the {@link PeerListUpdater} that feeds it, as one chooser for an outbound (yarpc-go's
 * {@code peer.Bind}). What an outbound does with its chooser reaches both: starting starts the list, then
 * the updater (so the updater's first peers are retained at once); stopping stops the updater, then the
 * list (so no update arrives at a stopped list). Choices, {@link #waitReason()} and introspection are
 * the list's, with the updater's status added.
 *
 * <pre>{@code
 * RoundRobinPeerList list = RoundRobinPeerList.builder(http).build();
 * PeerListUpdater dns = DnsPeerListUpdater.builder("users.default.svc.cluster.local").port(8080).build(list);
 * HttpOutbound users = http.outbound(BoundPeerChooser.of(list, dns));
 * }</pre>
 *
 * <p>Thread-safe, as the list and the updater are. The chooser owns both: start and stop them through it,
 * not by hand.
 *
 * @param <L> the list's type, so that {@link #list()} gives its own introspection methods
 */
public final class BoundPeerChooser<L extends PeerChooser & PeerList> extends AbstractLifecycle
    implements PeerChooser {
  private final L list;
  private final PeerListUpdater updater;

  private BoundPeerChooser(L list, PeerListUpdater updater) {
    this.list = requireNonNull(list, "list");
    this.updater = requireNonNull(updater, "updater");
  }

  /** {@code list}, fed by {@code updater}, which must have been built for this list. Nothing starts yet. */
  public static <L extends PeerChooser & PeerList> BoundPeerChooser<L> of(
      L list, PeerListUpdater updater) {
    return new BoundPeerChooser<>(list, updater);
  }

  /** The list that chooses. */
  public L list() {
    return list;
  }

  /** The updater that feeds the list. */
  public PeerListUpdater updater() {
    return updater;
  }

  /** Starts the list, then the updater; when the updater fails to start, the list is stopped again. */
  @Override
  protected void doStart() {
    list.start();
    updater.start(); // a failure makes AbstractLifecycle call doStop
  }

  /** Stops the updater, then the list (also when stopping the updater failed). */
  @Override
  protected void doStop() {
    try {
      updater.stop();
    } finally {
      list.stop();
    }
  }

  /** The list's choice. */
  @Override
  public CompletableFuture<PeerLease> choose(RequestMeta meta) {
    return list.choose(meta);
  }

  /**
   * The list's reason and, while the updater's reads fail, why: {@code "round-robin" peer list has no
   * peers; the dns updater of SRV users.svc.test failed: SRV lookup of users.svc.test failed:
   * NXDOMAIN}.
   */
  @Override
  public String waitReason() {
    String reason = list.waitReason();
    if (reason == null) {
      return null;
    }
    UpdaterStatus status = updater.status();
    if (status.lastError() == null) {
      return reason;
    }
    return reason
        + "; the "
        + status.kind()
        + " updater of "
        + status.source()
        + " failed: "
        + status.lastError();
  }

  /** The list's status ({@link ChooserStatus#kind()} is the list's) with the updater's. */
  @Override
  public ChooserStatus introspect() {
    return list.introspect().withUpdater(updater.status());
  }

  @Override
  public String toString() {
    return "BoundPeerChooser{" + list + ", " + updater + "}";
  }
}
