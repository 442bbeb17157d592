package io.yarpc.observability.metrics.internal;

/**
 * Tag values as yarpc-go's metrics library writes them ({@code go.uber.org/net/metrics}, {@code
 * scrubTagValue}): an empty value becomes {@value #EMPTY}; every byte of the UTF-8 form that is not
 * {@code [0-9A-Za-z_.-]} becomes {@code _} (so {@code Store::Get} is {@code Store__Get}, and a
 * two-byte character two underscores). Done once per edge, never per call.
 */
final class TagValues {
  /** What an empty value becomes. */
  static final String EMPTY = "default";

  private TagValues() {}

  static String scrub(String value) {
    if (value.isEmpty()) {
      return EMPTY;
    }
    if (isValid(value)) {
      return value;
    }
    StringBuilder sb = new StringBuilder(value.length());
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (valid(c)) {
        sb.append(c);
      } else {
        // as many underscores as the character has UTF-8 bytes (a surrogate pair: 2 + 2)
        int bytes = c < 0x80 ? 1 : c < 0x800 ? 2 : Character.isSurrogate(c) ? 2 : 3;
        for (int b = 0; b < bytes; b++) {
          sb.append('_');
        }
      }
    }
    return sb.toString();
  }

  private static boolean isValid(String value) {
    for (int i = 0; i < value.length(); i++) {
      if (!valid(value.charAt(i))) {
        return false;
      }
    }
    return true;
  }

  private static boolean valid(char c) {
    return (c >= '0' && c <= '9')
        || (c >= 'A' && c <= 'Z')
        || (c >= 'a' && c <= 'z')
        || c == '_'
        || c == '-'
        || c == '.';
  }
}
