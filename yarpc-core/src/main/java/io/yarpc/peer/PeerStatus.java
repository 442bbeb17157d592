package io.yarpc.peer;

import static java.util.Objects.requireNonNull;

/**
 * One peer as a chooser sees it at one moment, for introspection ({@link PeerChooser#introspect()}). An
 * immutable snapshot: it does not follow the peer.
 *
 * @param identifier the peer's identifier, usually {@code host:port}
 * @param status whether the peer could take calls when the snapshot was taken: {@code UNAVAILABLE} also
 *     for a connected peer the chooser holds out of rotation ({@linkplain OutlierDetection ejected})
 * @param unavailableReason why it could not (usually its last connection failure, {@code Connection
 *     refused: /127.0.0.1:8080}, or why the chooser holds it out, {@code ejected for 30s after 5
 *     consecutive failures (last: ...); on probation in 12s}), or null when it is available or the
 *     reason is unknown
 * @param pendingRequests the chooser's leases on this peer that were not finished yet: calls sent to it
 *     and not answered; 0 when the chooser does not count them
 */
public record PeerStatus(
    String identifier, ConnectionStatus status, String unavailableReason, int pendingRequests) {
  /**
   * Checks the arguments.
   *
   * @throws NullPointerException when {@code identifier} or {@code status} is null
   * @throws IllegalArgumentException when {@code pendingRequests} is negative
   */
  public PeerStatus {
    requireNonNull(identifier, "identifier");
    requireNonNull(status, "status");
    if (pendingRequests < 0) {
      throw new IllegalArgumentException(
          "pendingRequests must not be negative: " + pendingRequests);
    }
  }

  /**
   * {@code peer}'s identifier, status and — when it is not available — {@linkplain
   * Peer#unavailableReason() unavailable reason}, read now, with the chooser's count of its pending
   * requests.
   */
  public static PeerStatus of(Peer peer, int pendingRequests) {
    ConnectionStatus status = peer.status();
    String reason = status == ConnectionStatus.AVAILABLE ? null : peer.unavailableReason();
    return new PeerStatus(peer.identifier(), status, reason, pendingRequests);
  }
}
