package io.yarpc.internal;

import java.util.function.IntUnaryOperator;

/**
 * Rules for free text on the wire (error messages and names, application-error names and details) that
 * every transport follows, so a text is cut the same way whatever carries it.
 *
 * <ul>
 *   <li>Application-error details travel as at most {@value #MAX_DETAILS_BYTES} UTF-8 bytes, as yarpc-go's
 *       HTTP and TChannel transports send them ({@code truncateAppErrDetails}: a longer text keeps its
 *       start and ends in {@value #TRUNCATED}, 256 bytes in all). Unlike yarpc-go, which cuts between
 *       bytes, the cut never splits a character, so what arrives is valid UTF-8.
 *   <li>A transport whose wire holds less than a text needs cuts it the same way: whole characters from
 *       the start, then {@value #TRUNCATED}, within the transport's budget as measured on its wire (see
 *       {@link #truncate(String, int, IntUnaryOperator)}).
 * </ul>
 */
public final class WireText {
  /** The most UTF-8 bytes of application-error details a transport sends. */
  public static final int MAX_DETAILS_BYTES = 256;

  /** What a cut text ends with. */
  public static final String TRUNCATED = " (truncated)";

  private WireText() {}

  /** {@code details} as every transport sends them: cut to {@value #MAX_DETAILS_BYTES} UTF-8 bytes. */
  public static String details(String details) {
    return truncate(details, MAX_DETAILS_BYTES, WireText::utf8Length);
  }

  /**
   * {@code text} whole when its cost is at most {@code budget}; otherwise the longest prefix of whole code
   * points whose cost, plus the cost of {@value #TRUNCATED}, fits in {@code budget}, followed by
   * {@value #TRUNCATED}.
   *
   * @param costOfCodePoint what one code point costs on the wire, e.g. {@link #utf8Length} for a wire that
   *     carries UTF-8 bytes
   * @throws IllegalArgumentException when {@code budget} cannot even hold {@value #TRUNCATED}
   */
  public static String truncate(String text, int budget, IntUnaryOperator costOfCodePoint) {
    int marker = cost(TRUNCATED, costOfCodePoint);
    if (budget < marker) {
      throw new IllegalArgumentException("budget " + budget + " cannot hold the truncation marker");
    }
    int spent = 0;
    int fitsWithMarker = 0; // end of the longest prefix that leaves room for the marker
    for (int i = 0; i < text.length(); ) {
      int cp = text.codePointAt(i);
      spent += costOfCodePoint.applyAsInt(cp);
      if (spent > budget) {
        return text.substring(0, fitsWithMarker) + TRUNCATED;
      }
      i += Character.charCount(cp);
      if (spent + marker <= budget) {
        fitsWithMarker = i;
      }
    }
    return text;
  }

  /** How many bytes the UTF-8 form of {@code codePoint} takes (3 for a lone surrogate, an upper bound). */
  public static int utf8Length(int codePoint) {
    if (codePoint < 0x80) {
      return 1;
    }
    if (codePoint < 0x800) {
      return 2;
    }
    return codePoint < 0x10000 ? 3 : 4;
  }

  private static int cost(String s, IntUnaryOperator costOfCodePoint) {
    int total = 0;
    for (int i = 0; i < s.length(); ) {
      int cp = s.codePointAt(i);
      total += costOfCodePoint.applyAsInt(cp);
      i += Character.charCount(cp);
    }
    return total;
  }
}
