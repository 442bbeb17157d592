package io.yarpc.config;

import static java.util.Objects.requireNonNull;

import java.util.List;

/**
 * A configuration that cannot be loaded, with every problem found in it: each has the dotted key path it
 * concerns and what is wrong there, e.g. {@code outbounds.keyvalue.unary.http.url: not a URL: "::"}. The
 * message lists them all, one a line, in document order.
 *
 * <p>The loader reads the whole document before it throws, so one run shows every unknown key, wrong
 * type, missing required key, bad duration or address, unknown transport and builder refusal together.
 */
public final class ConfigException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  /** One problem: where ({@link #path()}) and what ({@link #message()}). */
  public static final class Problem {
    private final String path;
    private final String message;

    /** A problem at {@code path} (dotted keys from the root, {@code [i]} for list items). */
    public Problem(String path, String message) {
      this.path = requireNonNull(path, "path");
      this.message = requireNonNull(message, "message");
    }

    /** The dotted key path, e.g. {@code inbounds.http.address}; empty for the document itself. */
    public String path() {
      return path;
    }

    /** What is wrong there. */
    public String message() {
      return message;
    }

    /** {@code path: message}, or the message alone when the path is empty. */
    @Override
    public String toString() {
      return path.isEmpty() ? message : path + ": " + message;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Problem
          && ((Problem) o).path.equals(path)
          && ((Problem) o).message.equals(message);
    }

    @Override
    public int hashCode() {
      return path.hashCode() * 31 + message.hashCode();
    }
  }

  private final transient List<Problem> problems;

  /**
   * An exception for {@code problems} (at least one) found in the configuration {@code source} describes
   * (a file name, or a short description such as {@code YAML} or {@code map}).
   */
  public ConfigException(String source, List<Problem> problems) {
    super(message(source, problems));
    this.problems = List.copyOf(problems);
  }

  /** The problems, in document order. */
  public List<Problem> problems() {
    return problems;
  }

  private static String message(String source, List<Problem> problems) {
    if (problems.isEmpty()) {
      throw new IllegalArgumentException("a ConfigException needs at least one problem");
    }
    StringBuilder s = new StringBuilder("invalid yarpc configuration");
    if (source != null && !source.isEmpty()) {
      s.append(" (").append(source).append(')');
    }
    s.append(": ").append(problems.size()).append(problems.size() == 1 ? " problem" : " problems");
    for (Problem p : problems) {
      s.append("\n  ").append(p);
    }
    return s.toString();
  }
}
