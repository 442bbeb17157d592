package io.yarpc.examples;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Durations on the command line: Go's notation in, a short human form out. */
final class Durations {
  private static final Pattern PART = Pattern.compile("(\\d+(?:\\.\\d+)?)(ns|us|µs|ms|s|m|h)");

  private Durations() {}

  /**
   * The value of the flag {@code --flag}: a Go-style duration ({@code 1s}, {@code 500ms}, {@code 1m30s})
   * or a number of milliseconds; positive.
   */
  static Duration parse(String flag, String text) throws Flags.UsageException {
    if (text.matches("\\d+")) {
      return positive(flag, Duration.ofMillis(Long.parseLong(text)), text);
    }
    Matcher m = PART.matcher(text);
    int end = 0;
    double nanos = 0;
    while (m.find() && m.start() == end) {
      double n = Double.parseDouble(m.group(1));
      switch (m.group(2)) {
        case "ns":
          nanos += n;
          break;
        case "us":
        case "µs":
          nanos += n * 1e3;
          break;
        case "ms":
          nanos += n * 1e6;
          break;
        case "s":
          nanos += n * 1e9;
          break;
        case "m":
          nanos += n * 60e9;
          break;
        default:
          nanos += n * 3600e9;
          break;
      }
      end = m.end();
    }
    if (end == 0 || end != text.length()) {
      throw new Flags.UsageException(
          "--" + flag + " wants a duration such as 1s or 500ms, got \"" + text + "\"");
    }
    return positive(flag, Duration.ofNanos((long) nanos), text);
  }

  private static Duration positive(String flag, Duration d, String text)
      throws Flags.UsageException {
    if (d.isZero()) {
      throw new Flags.UsageException("--" + flag + " must be positive, got \"" + text + "\"");
    }
    return d;
  }

  /** {@code nanos} for people: {@code 850µs}, {@code 12.3ms}, {@code 4.56s}. */
  static String format(long nanos) {
    if (nanos < 1_000_000) {
      return String.format(Locale.ROOT, "%.0fµs", nanos / 1e3);
    }
    if (nanos < 1_000_000_000) {
      return String.format(Locale.ROOT, "%.2fms", nanos / 1e6);
    }
    return String.format(Locale.ROOT, "%.2fs", nanos / 1e9);
  }
}
