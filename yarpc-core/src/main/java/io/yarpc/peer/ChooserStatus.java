package io.yarpc.peer;

import static java.util.Objects.requireNonNull;

import java.util.List;

/**
 * A peer chooser at one moment, for introspection ({@link PeerChooser#introspect()}): what kind of
 * chooser it is and the peers it may choose from. An immutable snapshot.
 *
 * @param kind the chooser's kind as configuration and yarpc-go name it ({@code single}, {@code
 *     round-robin}); a chooser that does not say is named by its class's simple name
 * @param peers the peers it holds, in its own order (a list: the order identifiers were added); empty
 *     when it has none or does not tell
 */
public record ChooserStatus(String kind, List<PeerStatus> peers) {
  /**
   * Checks the arguments and copies {@code peers}.
   *
   * @throws NullPointerException when an argument or a peer is null
   */
  public ChooserStatus {
    requireNonNull(kind, "kind");
    peers = List.copyOf(peers);
  }
}
