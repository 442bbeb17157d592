package io.yarpc.examples;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A parsed command line: the values of {@code --name value} or {@code --name=value} flags (a flag may
 * repeat), then positional arguments; {@code --} ends the flags. {@link FlagSet#parse} makes one.
 */
final class Flags {
  /** A command line the command cannot run with; its message is shown above the usage. */
  static final class UsageException extends Exception {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
      super(message);
    }
  }

  private final Map<String, List<String>> values = new LinkedHashMap<>();
  private final List<String> positional = new ArrayList<>();
  private boolean help;

  private Flags() {}

  /**
   * Parses {@code args} against {@code set}: only its flags are accepted, and {@code -h} or {@code
   * --help} anywhere before {@code --} asks for the usage ({@link #help()}) whatever else is there.
   */
  static Flags parse(String[] args, FlagSet set) throws UsageException {
    Flags flags = new Flags();
    for (String arg : args) {
      if (arg.equals("--")) {
        break;
      }
      if (arg.equals("-h") || arg.equals("--help")) {
        flags.help = true;
        return flags;
      }
    }
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      if (arg.equals("--")) {
        for (i++; i < args.length; i++) {
          flags.positional.add(args[i]);
        }
        break;
      }
      if (!arg.startsWith("--") || arg.length() == 2) {
        flags.positional.add(arg);
        continue;
      }
      String name = arg.substring(2);
      String value = null;
      int eq = name.indexOf('=');
      if (eq >= 0) {
        value = name.substring(eq + 1);
        name = name.substring(0, eq);
      }
      if (!set.has(name)) {
        throw new UsageException("unknown flag --" + name);
      }
      if (value == null) {
        if (i + 1 >= args.length) {
          throw new UsageException("flag --" + name + " needs a value");
        }
        value = args[++i];
      }
      flags.values.computeIfAbsent(name, k -> new ArrayList<>()).add(value);
    }
    return flags;
  }

  /** Whether {@code -h} or {@code --help} was given: the command prints its usage and nothing else. */
  boolean help() {
    return help;
  }

  /** Whether {@code name} was given. */
  boolean has(String name) {
    return values.containsKey(name);
  }

  /** The last value of {@code name}, or {@code fallback}. */
  String get(String name, String fallback) {
    List<String> v = values.get(name);
    return v == null ? fallback : v.get(v.size() - 1);
  }

  /** The last value of {@code name}. @throws UsageException when it is missing */
  String required(String name) throws UsageException {
    String v = get(name, null);
    if (v == null || v.isEmpty()) {
      throw new UsageException("missing --" + name);
    }
    return v;
  }

  /** Every value of {@code name}, in order. */
  List<String> all(String name) {
    return values.getOrDefault(name, List.of());
  }

  /** A port flag: 0 to 65535 (0: any free port). */
  int port(String name, int fallback) throws UsageException {
    String v = get(name, null);
    if (v == null) {
      return fallback;
    }
    try {
      int port = Integer.parseInt(v);
      if (port >= 0 && port <= 65535) {
        return port;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new UsageException(
        "--" + name + " must be a port number (0 to 65535), got \"" + v + "\"");
  }

  /** A whole-number flag of at least {@code min}, or {@code fallback} when it is not given. */
  long atLeast(String name, long min, long fallback) throws UsageException {
    return number(name, min, Long.MAX_VALUE, fallback);
  }

  /** A whole-number flag from {@code min} to {@code max}, or {@code fallback} when it is not given. */
  long number(String name, long min, long max, long fallback) throws UsageException {
    String v = get(name, null);
    if (v == null) {
      return fallback;
    }
    try {
      long n = Long.parseLong(v.trim());
      if (n >= min && n <= max) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new UsageException(
        "--"
            + name
            + " must be a whole number "
            + (max == Long.MAX_VALUE ? "of at least " + min : "from " + min + " to " + max)
            + ", got \""
            + v
            + "\"");
  }

  /** The positional arguments. */
  List<String> positional() {
    return positional;
  }

  /** Refuses positional arguments: the command takes none. */
  void noPositional() throws UsageException {
    if (!positional.isEmpty()) {
      throw new UsageException("unexpected argument \"" + positional.get(0) + "\"");
    }
  }
}
