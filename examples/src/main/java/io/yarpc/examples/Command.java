package io.yarpc.examples;

import java.io.PrintStream;

/**
 * A command of {@code yarpc-examples.jar}: its flags, and what it does with them. {@link #execute} is
 * where every command gets the same command-line rules: {@code -h} or {@code --help} prints its usage on
 * standard output (status 0); an unknown flag, a missing value or any other {@link Flags.UsageException}
 * prints {@code <command>: <what is wrong>} and the usage on standard error (status 2).
 */
interface Command {
  /** The flags it accepts, with their usage. */
  FlagSet flags();

  /**
   * Runs it with parsed flags; returns its exit status, or -1 for a command that keeps running until the
   * JVM exits ({@code serve}).
   *
   * @throws Flags.UsageException when the flags do not make sense together
   */
  int run(Flags flags, PrintStream out, PrintStream err) throws Exception;

  /** Parses {@code args} for {@code command} and runs it, applying the rules above. */
  static int execute(Command command, String[] args, PrintStream out, PrintStream err)
      throws Exception {
    FlagSet set = command.flags();
    try {
      Flags flags = set.parse(args);
      if (flags.help()) {
        out.print(set.usage());
        out.flush();
        return 0;
      }
      return command.run(flags, out, err);
    } catch (Flags.UsageException e) {
      err.println(set.command() + ": " + e.getMessage());
      err.println();
      err.print(set.usage());
      err.flush();
      return 2;
    }
  }
}
