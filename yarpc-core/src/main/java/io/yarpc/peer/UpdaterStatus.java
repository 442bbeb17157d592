package io.yarpc.peer;

import static java.util.Objects.requireNonNull;

import java.time.Instant;
import java.util.List;

/**
 * A {@link PeerListUpdater} at one moment ({@link PeerListUpdater#status()}), for introspection: where
 * its peers come from, which it applied, and whether reading the source works. An immutable snapshot.
 *
 * @param kind the updater's kind as configuration names it ({@code dns}, {@code peers-file})
 * @param source what it reads, for people: {@code SRV _http._tcp.users.default.svc.cluster.local} or a
 *     file's path
 * @param running whether it is started and not stopped
 * @param peers the identifiers it applied to its list last, in the source's order; empty before the first
 *     successful read
 * @param lastRefresh when the source was last read successfully (whether or not the membership changed),
 *     or null when it never was
 * @param lastError why the latest read failed ({@code lookup of SRV users.svc.test failed: NXDOMAIN}),
 *     or null when it succeeded or none was made yet
 * @param consecutiveFailures how many reads in a row failed, up to the latest; 0 when the latest
 *     succeeded
 */
public record UpdaterStatus(
    String kind,
    String source,
    boolean running,
    List<String> peers,
    Instant lastRefresh,
    String lastError,
    int consecutiveFailures) {
  /**
   * Checks the arguments and copies {@code peers}.
   *
   * @throws NullPointerException when {@code kind}, {@code source}, {@code peers} or a peer is null
   * @throws IllegalArgumentException when {@code consecutiveFailures} is negative
   */
  public UpdaterStatus {
    requireNonNull(kind, "kind");
    requireNonNull(source, "source");
    peers = List.copyOf(peers);
    if (consecutiveFailures < 0) {
      throw new IllegalArgumentException(
          "consecutiveFailures must not be negative: " + consecutiveFailures);
    }
  }
}
