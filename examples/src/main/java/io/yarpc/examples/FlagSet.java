package io.yarpc.examples;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The flags a command accepts, in groups, each with its value, default and a line of help: what {@link
 * Flags#parse} accepts and what {@link #usage()} prints come from this one list.
 *
 * <pre>
 * usage: java -jar yarpc-examples.jar serve [flags]
 *
 * Serves the yarpc-test service until interrupted.
 *
 * ports:
 *   --http-port PORT       the HTTP inbound's port (0: any free port) (default 8080)
 * </pre>
 */
final class FlagSet {
  /**
   * One flag.
   *
   * @param name its name, without dashes
   * @param value what its value is, for the usage ({@code PORT}, {@code FILE})
   * @param defaultValue what applies without it, for the usage; null when nothing does or the help says
   * @param help what it does, one line
   */
  record Flag(String name, String value, String defaultValue, String help) {}

  /** The width the usage's flag lines are wrapped at. */
  private static final int COLUMNS = 100;

  private final String command;
  private final String synopsis;
  private final String description;
  private final Map<String, List<Flag>> groups = new LinkedHashMap<>();
  private final Map<String, Flag> byName = new LinkedHashMap<>();

  /**
   * A command's flags, none yet.
   *
   * @param command its name ({@code serve})
   * @param synopsis what follows the name in the usage line ({@code [flags] [BODY]})
   * @param description what it does, lines of prose
   */
  FlagSet(String command, String synopsis, String description) {
    this.command = command;
    this.synopsis = synopsis;
    this.description = description;
  }

  /** Adds a group of flags under {@code title}. */
  FlagSet group(String title, List<Flag> flags) {
    for (Flag f : flags) {
      if (byName.put(f.name(), f) != null) {
        throw new IllegalArgumentException("flag --" + f.name() + " declared twice");
      }
    }
    groups.computeIfAbsent(title, t -> new ArrayList<>()).addAll(flags);
    return this;
  }

  /** Whether {@code name} is one of the flags. */
  boolean has(String name) {
    return byName.containsKey(name);
  }

  /** The names of the flags of the group {@code title}. */
  List<String> names(String title) {
    return groups.getOrDefault(title, List.of()).stream().map(Flag::name).toList();
  }

  /** Parses a command line with these flags; see {@link Flags#parse}. */
  Flags parse(String[] args) throws Flags.UsageException {
    return Flags.parse(args, this);
  }

  /** The command's name. */
  String command() {
    return command;
  }

  /** The usage: the usage line, the description, then every group's flags with their defaults. */
  String usage() {
    StringBuilder s = new StringBuilder();
    s.append("usage: java -jar yarpc-examples.jar ").append(command);
    if (!synopsis.isEmpty()) {
      s.append(' ').append(synopsis);
    }
    s.append("\n\n").append(description).append('\n');
    int width = "-h, --help".length();
    for (Flag f : byName.values()) {
      width = Math.max(width, left(f).length());
    }
    for (Map.Entry<String, List<Flag>> group : groups.entrySet()) {
      s.append('\n').append(group.getKey()).append(":\n");
      for (Flag f : group.getValue()) {
        String help =
            f.defaultValue() == null ? f.help() : f.help() + " (default " + f.defaultValue() + ")";
        line(s, left(f), width, help);
      }
    }
    s.append('\n');
    line(s, "-h, --help", width, "this text");
    return s.toString();
  }

  /** {@code  name  help}, the help wrapped at {@link #COLUMNS} under itself. */
  private static void line(StringBuilder s, String name, int width, String help) {
    String indent = " ".repeat(width + 4);
    StringBuilder line = new StringBuilder(String.format("  %-" + width + "s  ", name));
    boolean first = true;
    for (String word : help.split(" ")) {
      if (!first && line.length() + 1 + word.length() > COLUMNS) {
        s.append(line).append('\n');
        line = new StringBuilder(indent).append(word);
      } else {
        line.append(first ? "" : " ").append(word);
      }
      first = false;
    }
    s.append(line).append('\n');
  }

  private static String left(Flag f) {
    return "--" + f.name() + " " + f.value();
  }
}
