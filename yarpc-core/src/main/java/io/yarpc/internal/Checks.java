package io.yarpc.internal;

import static java.util.Objects.requireNonNull;

import java.time.Duration;

/** Argument checks the builders of every module share, so their messages read alike. */
public final class Checks {
  private Checks() {}

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
