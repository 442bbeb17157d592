package io.yarpc.internal;

/** Strings formatted the way Go formats them, for messages yarpc-go peers compare verbatim. */
public final class GoStrings {
  private GoStrings() {}

  /** Go's {@code %q}: {@code s} in double quotes with Go's escapes, as yarpc-go messages print names. */
  public static String quote(String s) {
    StringBuilder sb = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"':
          sb.append("\\\"");
          break;
        case '\\':
          sb.append("\\\\");
          break;
        case '\u0007':
          sb.append("\\a");
          break;
        case '\b':
          sb.append("\\b");
          break;
        case '\f':
          sb.append("\\f");
          break;
        case '\n':
          sb.append("\\n");
          break;
        case '\r':
          sb.append("\\r");
          break;
        case '\t':
          sb.append("\\t");
          break;
        case '\u000b':
          sb.append("\\v");
          break;
        default:
          if (c < 0x20 || c == 0x7f) {
            sb.append(String.format("\\x%02x", (int) c));
          } else {
            sb.append(c);
          }
      }
    }
    return sb.append('"').toString();
  }
}
