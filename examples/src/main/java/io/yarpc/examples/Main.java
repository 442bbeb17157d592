package io.yarpc.examples;

import java.util.Arrays;

/** Entry point of {@code yarpc-examples.jar}: {@code demo} runs the example end to end and exits. */
public final class Main {
  private Main() {}

  /** {@code java -jar yarpc-examples.jar demo}. */
  public static void main(String[] args) throws Exception {
    String command = args.length == 0 ? "demo" : args[0];
    switch (command) {
      case "demo":
        System.exit(Demo.run(Arrays.copyOfRange(args, Math.min(1, args.length), args.length)));
        break;
      default:
        System.err.println("usage: java -jar yarpc-examples.jar demo");
        System.exit(2);
    }
  }
}
