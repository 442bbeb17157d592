package io.yarpc.benchmarks;

import io.yarpc.benchmarks.load.LoadHarness;
import java.util.Arrays;

/**
 * Entry point of {@code yarpc-benchmarks.jar}: {@code load [options]} runs the end-to-end {@linkplain
 * LoadHarness load harness}; {@code report --json PATH [--markdown]} prints the tables of a run's results
 * file; anything else is handed to JMH's own {@code Main} (so {@code -prof gc},
 * {@code -l}, benchmark regexes and every other JMH option work as usual).
 */
public final class Main {
  private Main() {}

  /** Runs the load harness or JMH; see the class comment. */
  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("load")) {
      System.exit(LoadHarness.main(Arrays.copyOfRange(args, 1, args.length)));
    }
    if (args.length > 0 && args[0].equals("report")) {
      System.exit(LoadHarness.report(Arrays.copyOfRange(args, 1, args.length)));
    }
    org.openjdk.jmh.Main.main(args);
  }
}
