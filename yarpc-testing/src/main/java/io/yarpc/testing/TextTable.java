package io.yarpc.testing;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.internal.GoStrings;
import java.util.List;

/**
 * The texts the conformance kit sends through every text field a transport carries (error messages and
 * names, application-error names and details, request and response header values): control characters,
 * characters outside ASCII and the BMP, and a long one — what some wires cannot carry as they are; and
 * how the suite checks what arrives.
 */
final class TextTable {
  private TextTable() {}

  /** One text and a name for the test report. */
  record Row(String name, String text) {
    @Override
    public String toString() {
      return name;
    }
  }

  /** The longest application-error details that travel whole, in UTF-8 bytes (yarpc-go's rule). */
  static final int MAX_DETAILS_BYTES = 256;

  /** What details longer than {@link #MAX_DETAILS_BYTES} end with. */
  static final String TRUNCATED = " (truncated)";

  private static final List<Row> ROWS =
      List.of(
          new Row("plain ASCII", "plain message: 100% done, ~ok"),
          new Row("tab", "column\tcolumn"),
          new Row("CR", "before\rafter"),
          new Row("LF", "line one\nline two"),
          new Row("CRLF", "line one\r\nline two"),
          new Row("NUL and other C0 controls", "nul\u0000 bell\u0007 escape\u001b unit\u001f end"),
          new Row("DEL", "delete\u007fme"),
          new Row("surrounding whitespace", "  padded\t "),
          new Row("Latin-1", "café crème"),
          new Row("other BMP", "日本語 costs 5 €"),
          new Row("non-BMP", "smile 😀 clef 𝄞"),
          new Row("long (10 KiB)", "long message " + "0123456789abcdef".repeat(640)),
          new Row("mixed", "tab\there, CR\rLF\n, NUL\u0000, é, €, 😀 and %41 %zz"));

  /**
   * Texts longer than this many UTF-8 bytes are "long": a transport may cut them. The rows are either
   * short (under 128 bytes, which every wire's budget holds) or 10 KiB (more than any cutting wire's
   * budget), so where a cut falls never depends on a budget the suite does not know.
   */
  static final int LONG_BYTES = 1024;

  /** The rows, for {@code @MethodSource}. */
  static List<Row> rows() {
    return ROWS;
  }

  /**
   * The rows of at most {@value #LONG_BYTES} bytes, for header values: how large a header block each wire
   * accepts is a limit of its own, outside this table.
   */
  static List<Row> shortRows() {
    return ROWS.stream().filter(r -> !isLong(r.text())).toList();
  }

  static boolean isLong(String text) {
    return text.getBytes(UTF_8).length > LONG_BYTES;
  }

  /**
   * {@code details} as every transport sends application-error details: whole when at most
   * {@value #MAX_DETAILS_BYTES} UTF-8 bytes long, otherwise the longest prefix of whole characters that
   * leaves room for {@value #TRUNCATED} within that many bytes, followed by it.
   */
  static String truncatedDetails(String details) {
    if (details.getBytes(UTF_8).length <= MAX_DETAILS_BYTES) {
      return details;
    }
    int budget = MAX_DETAILS_BYTES - TRUNCATED.length();
    int end = 0;
    int bytes = 0;
    while (end < details.length()) {
      int cp = details.codePointAt(end);
      int size = new String(Character.toChars(cp)).getBytes(UTF_8).length;
      if (bytes + size > budget) {
        break;
      }
      bytes += size;
      end += Character.charCount(cp);
    }
    return details.substring(0, end) + TRUNCATED;
  }

  /** A text a transport cut keeps at least this many UTF-8 bytes of its start. */
  static final int MIN_KEPT_BYTES = 256;

  /**
   * Asserts that {@code got} is the error text a client of {@code transport} should read for {@code sent}:
   * the transport's form of it ({@link TransportUnderTest#expectedErrorText}), whole — or, for a long text
   * on a transport that {@linkplain TransportUnderTest#cutsLongErrorTexts cuts long texts}, cut: a prefix
   * of that form, at least {@value #MIN_KEPT_BYTES} UTF-8 bytes and ending between characters, then
   * {@value #TRUNCATED}.
   */
  static void assertErrorText(TransportUnderTest transport, String what, String got, String sent) {
    String expected = transport.expectedErrorText(sent);
    if (!isLong(sent) || !transport.cutsLongErrorTexts()) {
      assertText(what, got, expected);
      return;
    }
    assertThat(got).as("%s, which the transport cuts", what).isNotNull().endsWith(TRUNCATED);
    String kept = got.substring(0, got.length() - TRUNCATED.length());
    assertThat(expected.startsWith(kept))
        .as(
            "%s: the %d characters kept are the start of the %d sent",
            what, kept.length(), expected.length())
        .isTrue();
    assertThat(kept.getBytes(UTF_8).length)
        .as("%s: UTF-8 bytes kept", what)
        .isGreaterThanOrEqualTo(MIN_KEPT_BYTES)
        .isLessThan(expected.getBytes(UTF_8).length);
    assertThat(kept.isEmpty() || !Character.isHighSurrogate(kept.charAt(kept.length() - 1)))
        .as("%s: the cut falls between characters", what)
        .isTrue();
  }

  /** {@code got} equals {@code expected}; a mismatch of long texts is reported by its first difference. */
  static void assertText(String what, String got, String expected) {
    if (got == null || expected == null || got.length() + expected.length() < 400) {
      assertThat(got).as(what).isEqualTo(expected);
      return;
    }
    if (!got.equals(expected)) {
      int i = 0;
      while (i < got.length() && i < expected.length() && got.charAt(i) == expected.charAt(i)) {
        i++;
      }
      throw new AssertionError(
          String.format(
              "%s: %d characters, expected %d; first difference at %d: got %s," + " expected %s",
              what,
              got.length(),
              expected.length(),
              i,
              GoStrings.quote(got.substring(i, Math.min(got.length(), i + 40))),
              GoStrings.quote(expected.substring(i, Math.min(expected.length(), i + 40)))));
    }
  }
}
