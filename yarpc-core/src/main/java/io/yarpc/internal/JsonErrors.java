package io.yarpc.internal;

import com.google.gson.JsonIOException;
import com.google.gson.JsonSyntaxException;

/**
 * What a Gson failure says, fit for a remote peer: every JSON reader of yarpc-java (the JSON encoding's
 * bodies, TChannel's JSON headers) answers malformed input with it. Stateless.
 */
public final class JsonErrors {
  private static final String ADVICE_END = " to accept ";

  private JsonErrors() {}

  /**
   * The innermost useful message of {@code e} on one line. Gson wraps its reader's exceptions (prefixing
   * their class names), appends a "See https://..." troubleshooting line, and starts a syntax error with
   * advice to a Java caller ("Use JsonReader.setStrictness(Strictness.LENIENT) to accept malformed JSON
   * at ..."); none of that has a place in an error that transports send to a peer, so what is left reads
   * "malformed JSON at line L column C path P". Never a class name: "malformed JSON" when there is no
   * message.
   */
  public static String describe(Throwable e) {
    Throwable t = e;
    while ((t instanceof JsonSyntaxException || t instanceof JsonIOException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    String m = t.getMessage();
    if (m == null || m.isEmpty()) {
      return "malformed JSON";
    }
    int newline = m.indexOf('\n');
    String line = newline < 0 ? m : m.substring(0, newline).stripTrailing();
    int advice = line.startsWith("Use JsonReader.") ? line.indexOf(ADVICE_END) : -1;
    return advice < 0 ? line : line.substring(advice + ADVICE_END.length());
  }
}
