package io.yarpc.internal;

import static java.util.Objects.requireNonNull;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.RequestMeta;
import java.time.Duration;

/** Checks every module shares, so their messages read alike: builder arguments, a stopped component. */
public final class Checks {
  private Checks() {}

  /**
   * Checks the service a response says it came from ({@code received}; null or empty when the wire did not
   * say) against the request's, as yarpc-go's outbounds do.
   *
   * @throws YarpcException {@code internal} {@code service name sent from the request does not match the
   *     service name received in the response, sent "S", got: "R"}
   */
  public static void responseService(RequestMeta request, String received) {
    if (received != null && !received.isEmpty() && !received.equals(request.service())) {
      throw YarpcException.of(
          Code.INTERNAL,
          "service name sent from the request does not match the service "
              + "name received in the response, sent %s, got: %s",
          GoStrings.quote(request.service()),
          GoStrings.quote(received));
    }
  }

  /**
   * The one error every component gives a call made while it is not running (before {@code start}, after
   * {@code stop}): {@code unavailable} {@code WHAT is not running}.
   */
  public static YarpcException notRunning(String what) {
    return YarpcException.of(Code.UNAVAILABLE, "%s is not running", what);
  }

  /**
   * {@code d}, which must be positive.
   *
   * @throws NullPointerException when it is null
   * @throws IllegalArgumentException {@code NAME must be positive: D} when it is zero or negative
   */
  public static Duration positive(Duration d, String name) {
    requireNonNull(d, name);
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(name + " must be positive: " + d);
    }
    return d;
  }
}
