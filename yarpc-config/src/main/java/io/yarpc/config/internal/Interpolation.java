package io.yarpc.config.internal;

import java.util.function.Function;

/**
 * yarpc-go's interpolation: {@code ${NAME}} is the variable's value, {@code ${NAME:default}} its value or
 * {@code default} when it is unset; a name starts with a letter or {@code _} and goes on with letters,
 * digits, {@code _}, and single {@code .} or {@code -} between them; {@code \x} is {@code x} (so {@code
 * \$} is a dollar and {@code \\} a backslash); a {@code $} not followed by <code>{</code> is itself.
 */
final class Interpolation {
  private final Function<String, String> lookup;

  Interpolation(Function<String, String> lookup) {
    this.lookup = lookup;
  }

  /**
   * {@code text} with its variables replaced.
   *
   * @throws IllegalArgumentException saying what is wrong (an unterminated reference, a bad name, a
   *     variable with no value and no default)
   */
  String render(String text) {
    if (text.indexOf('$') < 0 && text.indexOf('\\') < 0) {
      return text;
    }
    StringBuilder out = new StringBuilder(text.length());
    int i = 0;
    while (i < text.length()) {
      char c = text.charAt(i);
      if (c == '\\') {
        if (i + 1 >= text.length()) {
          throw new IllegalArgumentException(
              "cannot interpolate \"" + text + "\": it ends with a lone '\\'");
        }
        out.append(text.charAt(i + 1));
        i += 2;
      } else if (c == '$' && i + 1 < text.length() && text.charAt(i + 1) == '{') {
        int end = text.indexOf('}', i + 2);
        if (end < 0) {
          throw new IllegalArgumentException(
              "cannot interpolate \"" + text + "\": \"${\" without a closing '}'");
        }
        String ref = text.substring(i + 2, end);
        int colon = ref.indexOf(':');
        String name = colon < 0 ? ref : ref.substring(0, colon);
        if (!validName(name)) {
          throw new IllegalArgumentException(
              "cannot interpolate \"" + text + "\": \"" + name + "\" is not a variable name");
        }
        String value = lookup.apply(name);
        if (value == null) {
          if (colon < 0) {
            throw new IllegalArgumentException(
                "variable \"" + name + "\" is not set and \"" + text + "\" gives no default");
          }
          value = ref.substring(colon + 1);
        }
        out.append(value);
        i = end + 1;
      } else {
        out.append(c);
        i++;
      }
    }
    return out.toString();
  }

  private static boolean validName(String name) {
    if (name.isEmpty()) {
      return false;
    }
    char first = name.charAt(0);
    if (!(Character.isLetter(first) && first < 128) && first != '_') {
      return false;
    }
    for (int i = 1; i < name.length(); i++) {
      char c = name.charAt(i);
      boolean word = (c < 128 && Character.isLetterOrDigit(c)) || c == '_';
      if (word) {
        continue;
      }
      if ((c == '.' || c == '-') && i + 1 < name.length()) {
        char next = name.charAt(i + 1);
        if ((next < 128 && Character.isLetterOrDigit(next)) || next == '_') {
          continue;
        }
      }
      return false;
    }
    return true;
  }
}
