package io.yarpc.peer.internal;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.GoDurations;
import java.time.Duration;

/**
 * The texts of a peer list that has no peer to give, as yarpc-go's abstractlist words them: the {@code
 * unavailable} error of a choice that fails, and the reason a waiting call's deadline error gives.
 */
public final class NoPeerErrors {
  private NoPeerErrors() {}

  /**
   * {@code "round-robin" peer list has 3 peers but none are responsive, timed out waiting for a
   * connection to open (fail-fast is not enabled): 51ms}, and its variants for no peers, one peer and
   * fail-fast.
   */
  public static YarpcException unavailable(
      String listName, int peers, boolean failFast, long waitedNanos) {
    String waited = formatDuration(waitedNanos);
    String message;
    if (peers == 0) {
      message =
          "has no peers, "
              + (failFast
                  ? "did not wait for peers to be added (fail-fast is enabled)"
                  : "waited for peers to be added but timed out (fail-fast is not enabled): "
                      + waited);
    } else {
      message =
          (peers == 1
                  ? "has 1 peer but it is not responsive, "
                  : "has " + peers + " peers but none are responsive, ")
              + (failFast
                  ? "did not wait for a connection to open (fail-fast is enabled)"
                  : "timed out waiting for a connection to open (fail-fast is not enabled): "
                      + waited);
    }
    return YarpcException.of(Code.UNAVAILABLE, quoted(listName) + " peer list " + message);
  }

  /**
   * {@code none of the 3 peers of the "round-robin" peer list is available}, followed by {@code ; peer
   * 10.0.0.1:80 is unreachable: Connection refused} when a peer's {@code reason} is known ({@code
   * unreachable} is that peer's identifier).
   */
  public static String waitReason(String listName, int peers, String unreachable, String reason) {
    String none =
        peers == 0
            ? quoted(listName) + " peer list has no peers"
            : "none of the "
                + peers
                + " peers of the "
                + quoted(listName)
                + " peer list is available";
    return reason == null ? none : none + "; peer " + unreachable + " is unreachable: " + reason;
  }

  /** {@code "round-robin"}. */
  public static String quoted(String listName) {
    return "\"" + listName + "\"";
  }

  /** Go-like duration text rounded to the millisecond: {@code 0s}, {@code 51ms}, {@code 1.5s}. */
  public static String formatDuration(long nanos) {
    return GoDurations.format(Duration.ofMillis(Math.max(0, (nanos + 500_000) / 1_000_000)));
  }
}
