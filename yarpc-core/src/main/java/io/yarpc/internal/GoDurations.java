package io.yarpc.internal;

import java.math.BigDecimal;
import java.time.Duration;

/** Formats durations the way Go's {@code time.Duration.String()} does, for messages yarpc-go peers compare. */
public final class GoDurations {
  private GoDurations() {}

  /** e.g. {@code 100ms}, {@code 1.5s}, {@code 2m3s}, {@code 250µs}, {@code 0s}. */
  public static String format(Duration d) {
    long nanos;
    try {
      nanos = d.toNanos();
    } catch (ArithmeticException e) {
      return d.toString();
    }
    if (nanos == 0) {
      return "0s";
    }
    String sign = nanos < 0 ? "-" : "";
    long abs = Math.abs(nanos);
    if (abs < 1_000) {
      return sign + abs + "ns";
    }
    if (abs < 1_000_000) {
      return sign + trim(abs, 3) + "µs";
    }
    if (abs < 1_000_000_000) {
      return sign + trim(abs, 6) + "ms";
    }
    long totalSeconds = abs / 1_000_000_000;
    long fraction = abs % 1_000_000_000;
    long hours = totalSeconds / 3600;
    long minutes = (totalSeconds % 3600) / 60;
    long seconds = totalSeconds % 60;
    StringBuilder sb = new StringBuilder(sign);
    if (hours > 0) {
      sb.append(hours).append('h');
    }
    if (hours > 0 || minutes > 0) {
      sb.append(minutes).append('m');
    }
    sb.append(trim(seconds * 1_000_000_000 + fraction, 9)).append('s');
    return sb.toString();
  }

  private static String trim(long value, int scale) {
    return BigDecimal.valueOf(value, scale).stripTrailingZeros().toPlainString();
  }
}
