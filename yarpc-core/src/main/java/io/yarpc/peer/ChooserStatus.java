package io.yarpc.peer;

import static java.util.Objects.requireNonNull;

import java.util.List;

/**
 * A peer chooser at one moment, for introspection ({@link PeerChooser#introspect()}): what kind of
 * chooser it is, the peers it may choose from and, for a list fed by an updater ({@link
 * BoundPeerChooser}), the updater's status. An immutable snapshot.
 *
 * @param kind the chooser's kind as configuration and yarpc-go name it ({@code single}, {@code
 *     round-robin}); a chooser that does not say is named by its class's simple name
 * @param peers the peers it holds, in its own order (a list: the order identifiers were added); empty
 *     when it has none or does not tell
 * @param updater the status of the updater that feeds its membership ({@code dns}, {@code peers-file}),
 *     or null when it has none
 */
public record ChooserStatus(String kind, List<PeerStatus> peers, UpdaterStatus updater) {
  /**
   * Checks the arguments and copies {@code peers}.
   *
   * @throws NullPointerException when {@code kind}, {@code peers} or a peer is null
   */
  public ChooserStatus {
    requireNonNull(kind, "kind");
    peers = List.copyOf(peers);
  }

  /** A chooser without an updater. */
  public ChooserStatus(String kind, List<PeerStatus> peers) {
    this(kind, peers, null);
  }

  /** This status with {@code updater} as its updater's. */
  public ChooserStatus withUpdater(UpdaterStatus updater) {
    return new ChooserStatus(kind, peers, updater);
  }
}
