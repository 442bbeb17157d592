package io.yarpc.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The command-line rules every command shares ({@link Command}): {@code -h} and {@code --help} print the
 * usage on standard output with status 0, whatever else is on the line; an unknown flag, a flag without
 * its value or a stray argument prints what is wrong and the usage on standard error with status 2.
 */
@Timeout(120)
class CommandLineTest {
  /** What one command printed and returned. */
  record Run(int status, String out, String err) {}

  static Run main(String... args) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status =
        Main.run(
            args,
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Run(
        status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  @ParameterizedTest
  @ValueSource(strings = {"demo", "serve", "call"})
  void everyCommandAnswersHelpWithItsUsage(String command) throws Exception {
    for (String help : List.of("--help", "-h")) {
      Run run = main(command, help);
      assertThat(run.status()).as(command + " " + help + ": " + run.err()).isZero();
      assertThat(run.err()).isEmpty();
      assertThat(run.out())
          .startsWith("usage: java -jar yarpc-examples.jar " + command)
          .contains("-h, --help");
    }
  }

  @Test
  void helpWinsOverEverythingElseOnTheLine() throws Exception {
    // before, "serve --help" read --help as a flag wanting a value
    Run run = main("serve", "--http-port", "1", "--help");
    assertThat(run.status()).isZero();
    assertThat(run.out()).startsWith("usage: java -jar yarpc-examples.jar serve");
    Run call = main("call", "--procedure", "p", "-h", "--nonsense");
    assertThat(call.status()).isZero();
    assertThat(call.out()).startsWith("usage: java -jar yarpc-examples.jar call");
  }

  @Test
  void theUsageListsEveryFlagWithItsDefault() throws Exception {
    String serve = main("serve", "--help").out();
    assertThat(serve)
        .containsPattern(
            "--http-port PORT +the HTTP inbound's port; 0: any free port \\(default 8080\\)")
        .containsPattern("--host ADDRESS +.*\\(default 127\\.0\\.0\\.1\\)")
        .contains("--grpc-port PORT", "--tchannel-port PORT", "--admin-port PORT", "--config FILE")
        .contains("--tls-cert FILE", "--tls-mode MODE", "--tls-client-auth AUTH");
    String call = main("call", "--help").out();
    assertThat(call)
        .containsPattern("--timeout DURATION +each call's timeout \\(default 1s\\)")
        .containsPattern("--peer-list NAME +how calls are spread")
        .containsPattern("--concurrency C +calls in flight at once \\(default 1\\)")
        .containsPattern("--rps R +.*\\(default 0: unlimited\\)")
        .contains(
            "--peers HOST:PORT,...", "--peer-file FILE", "--dns-srv NAME", "--dns-a NAME:PORT")
        .contains("--dns-server IP[:PORT]", "--requests N", "--duration DURATION", "--warmup N")
        .contains("--config FILE", "--outbound NAME", "--tls-ca FILE", "--shard-key KEY");
    assertThat(call.replaceAll("\\s+", " "))
        .contains(
            "round-robin, fewest-pending-requests, random, two-random-choices, hashring32"
                + " (default round-robin)");
    assertThat(call.lines()).allSatisfy(l -> assertThat(l.length()).isLessThanOrEqualTo(100));
  }

  @ParameterizedTest
  @ValueSource(strings = {"demo", "serve", "call"})
  void anUnknownFlagIsAUsageError(String command) throws Exception {
    for (String[] args : List.of(new String[] {"--bogus"}, new String[] {"--bogus", "1"})) {
      List<String> line = new ArrayList<>(List.of(command));
      line.addAll(List.of(args));
      Run run = main(line.toArray(String[]::new));
      assertThat(run.status()).isEqualTo(2);
      assertThat(run.out()).isEmpty();
      assertThat(run.err())
          .startsWith(command + ": unknown flag --bogus\n")
          .contains("usage: java -jar yarpc-examples.jar " + command);
    }
  }

  @Test
  void aFlagWithoutItsValueAndAStrayArgumentAreUsageErrors() throws Exception {
    Run noValue = main("serve", "--http-port");
    assertThat(noValue.status()).isEqualTo(2);
    assertThat(noValue.err()).startsWith("serve: flag --http-port needs a value\n");
    Run stray = main("demo", "now");
    assertThat(stray.status()).isEqualTo(2);
    assertThat(stray.err()).startsWith("demo: unexpected argument \"now\"\n");
    Run twoBodies =
        main(
            "call",
            "--peer",
            "127.0.0.1:1",
            "--transport",
            "http",
            "--service",
            "s",
            "--procedure",
            "p",
            "--encoding",
            "raw",
            "one",
            "two");
    assertThat(twoBodies.status()).isEqualTo(2);
    assertThat(twoBodies.err()).startsWith("call: one BODY argument expected, got 2");
  }

  @Test
  void mainListsTheCommands() throws Exception {
    for (String help : List.of("help", "--help", "-h")) {
      Run run = main(help);
      assertThat(run.status()).isZero();
      assertThat(run.out())
          .contains("demo", "serve", "call", "<command> --help shows a command's flags");
    }
  }

  /** The bug this came from was on the command line of a real JVM: run one. */
  @Test
  void serveHelpInItsOwnJvmExitsZeroWithTheUsage() throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process process =
        new ProcessBuilder(
                java,
                "-cp",
                System.getProperty("java.class.path"),
                Main.class.getName(),
                "serve",
                "--help")
            .redirectErrorStream(true)
            .start();
    try {
      String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(process.exitValue()).as(out).isZero();
      assertThat(out)
          .startsWith("usage: java -jar yarpc-examples.jar serve")
          .contains("--http-port");
    } finally {
      process.destroyForcibly();
    }
  }
}
