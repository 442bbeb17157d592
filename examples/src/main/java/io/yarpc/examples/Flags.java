package io.yarpc.examples;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A small command-line parser for the subcommands: {@code --name value} or {@code --name=value} flags
 * (a flag may repeat), then positional arguments; {@code --} ends the flags.
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

  private Flags() {}

  /** Parses {@code args}, accepting only the flags in {@code known} (names without dashes). */
  static Flags parse(String[] args, Set<String> known) throws UsageException {
    Flags flags = new Flags();
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
      String value;
      int eq = name.indexOf('=');
      if (eq >= 0) {
        value = name.substring(eq + 1);
        name = name.substring(0, eq);
      } else if (i + 1 < args.length) {
        value = args[++i];
      } else {
        throw new UsageException("flag --" + name + " needs a value");
      }
      if (!known.contains(name)) {
        throw new UsageException("unknown flag --" + name);
      }
      flags.values.computeIfAbsent(name, k -> new ArrayList<>()).add(value);
    }
    return flags;
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

  /** The positional arguments. */
  List<String> positional() {
    return positional;
  }
}
