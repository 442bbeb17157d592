package io.yarpc.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Runs {@code demo} end to end, in process: every transport's rows must have behaved as expected. */
@Timeout(120)
class DemoTest {
  @Test
  void everyTransportRowSucceeds() {
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    Demo.Result result = Demo.run(new PrintStream(printed, true, StandardCharsets.UTF_8));
    String output = printed.toString(StandardCharsets.UTF_8);

    assertThat(result.rows())
        .as(output)
        .allSatisfy(row -> assertThat(row.ok()).as(row.toString()).isTrue());
    assertThat(result.exitCode()).as(output).isZero();

    Map<String, List<Demo.Row>> byTransport =
        result.rows().stream().collect(Collectors.groupingBy(Demo.Row::transport));
    assertThat(byTransport).containsOnlyKeys("http", "grpc", "tchannel");
    for (List<Demo.Row> rows : byTransport.values()) {
      assertThat(rows)
          .extracting(Demo.Row::step)
          .contains("SetValue greeting", "GetValue greeting", "GetValue missing -> not-found");
      assertThat(rows)
          .extracting(Demo.Row::outcome)
          .anySatisfy(o -> assertThat(o).startsWith("not-found").contains("KEY_NOT_FOUND"))
          .anySatisfy(o -> assertThat(o).isEqualTo("deadline-exceeded"));
    }
    assertThat(byTransport.get("grpc"))
        .extracting(Demo.Row::outcome)
        .anySatisfy(
            o ->
                assertThat(o)
                    .isEqualTo("\"hello over grpc\" -> \"bonjour\" -> \"hallo\", then cancelled"));

    assertThat(output).contains("transport", "latency", "Every step behaved as expected.");
  }

  @Test
  void mainRunsTheDemoByDefault() throws Exception {
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(printed, true, StandardCharsets.UTF_8);
    assertThat(Main.run(new String[0], out, out))
        .as(printed.toString(StandardCharsets.UTF_8))
        .isZero();
  }

  @Test
  void unknownCommandIsAUsageError() throws Exception {
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(printed, true, StandardCharsets.UTF_8);
    assertThat(Main.run(new String[] {"nope"}, out, out)).isEqualTo(2);
    assertThat(printed.toString(StandardCharsets.UTF_8))
        .contains("unknown command \"nope\"", "usage:");
  }
}
