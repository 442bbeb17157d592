package io.yarpc.internal;

import java.math.BigDecimal;
import java.time.Duration;

/**
 * Formats durations the way Go's {@code time.Duration.String()} does, for messages yarpc-go peers compare,
 * and parses them the way {@code time.ParseDuration} does, for configuration files written for yarpc-go.
 */
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

  /**
   * Parses a Go duration: an optional sign, then one or more decimal numbers (with an optional fraction)
   * each followed by a unit, {@code ns}, {@code us} ({@code µs}, {@code μs}), {@code ms}, {@code s}, {@code
   * m} or {@code h}: {@code 300ms}, {@code -1.5h}, {@code 2h45m}; {@code 0} alone needs no unit.
   *
   * @throws IllegalArgumentException saying what is wrong ({@code missing unit}, {@code unknown unit "d"})
   */
  public static Duration parse(String text) {
    String s = text;
    int i = 0;
    boolean negative = false;
    if (!s.isEmpty() && (s.charAt(0) == '-' || s.charAt(0) == '+')) {
      negative = s.charAt(0) == '-';
      i = 1;
    }
    if (s.substring(i).equals("0")) {
      return Duration.ZERO;
    }
    if (i == s.length()) {
      throw new IllegalArgumentException("invalid duration \"" + text + "\"");
    }
    BigDecimal totalNanos = BigDecimal.ZERO;
    while (i < s.length()) {
      int start = i;
      while (i < s.length() && (Character.isDigit(s.charAt(i)) || s.charAt(i) == '.')) {
        i++;
      }
      String number = s.substring(start, i);
      if (number.isEmpty()
          || number.equals(".")
          || number.indexOf('.') != number.lastIndexOf('.')) {
        throw new IllegalArgumentException("invalid duration \"" + text + "\"");
      }
      int unitStart = i;
      while (i < s.length() && !Character.isDigit(s.charAt(i)) && s.charAt(i) != '.') {
        i++;
      }
      String unit = s.substring(unitStart, i);
      long unitNanos;
      switch (unit) {
        case "ns":
          unitNanos = 1L;
          break;
        case "us":
        case "\u00b5s":
        case "\u03bcs":
          unitNanos = 1_000L;
          break;
        case "ms":
          unitNanos = 1_000_000L;
          break;
        case "s":
          unitNanos = 1_000_000_000L;
          break;
        case "m":
          unitNanos = 60_000_000_000L;
          break;
        case "h":
          unitNanos = 3_600_000_000_000L;
          break;
        case "":
          throw new IllegalArgumentException("missing unit in duration \"" + text + "\"");
        default:
          throw new IllegalArgumentException(
              "unknown unit \"" + unit + "\" in duration \"" + text + "\"");
      }
      totalNanos = totalNanos.add(new BigDecimal(number).multiply(BigDecimal.valueOf(unitNanos)));
    }
    if (totalNanos.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0) {
      throw new IllegalArgumentException("invalid duration \"" + text + "\": too long");
    }
    long nanos = totalNanos.longValue();
    return Duration.ofNanos(negative ? -nanos : nanos);
  }
}
