package io.yarpc.config;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.yarpc.CallOptions;
import io.yarpc.Dispatcher;
import io.yarpc.config.TaggingSectionSpec.Seen;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.encoding.raw.RawClient;
import java.io.StringReader;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Sections read by a {@link io.yarpc.config.spi.SectionSpec} (a module's {@code metrics} or {@code
 * logging.levels}; here a test spec that installs a middleware): where they may be, their problems with
 * key paths, what they do to the builder (only when the whole document is valid, in document order,
 * before the program's middleware), and the objects the program provides for them.
 */
@Timeout(60)
class SectionSpecTest {
  private static final String SELF =
      String.join(
          "\n",
          "inbounds:",
          "  in-memory: {}",
          "outbounds:",
          "  self:",
          "    service: tagged",
          "    in-memory: {}",
          "");

  private static YarpcConfig.Loader loader(Seen seen) {
    return YarpcConfig.loader()
        .transportSpec(new InMemoryTransportSpec())
        .sectionSpec(new TaggingSectionSpec("tagging"))
        .sectionSpec(new TaggingSectionSpec("logging.tags"))
        .provide(Seen.class, seen);
  }

  /** Builds {@code builder}, calls {@code echo} and {@code other} on itself, stops. */
  private static void callTwice(Dispatcher.Builder builder) throws Exception {
    Dispatcher d = builder.build();
    d.register(Raw.procedure("echo", body -> body), Raw.procedure("other", body -> body));
    d.start();
    try {
      RawClient client = RawClient.of(d.clientConfig("self"));
      for (String procedure : List.of("echo", "other")) {
        byte[] reply =
            client
                .call(procedure, "hi".getBytes(UTF_8), CallOptions.timeout(Duration.ofSeconds(5)))
                .get(10, TimeUnit.SECONDS);
        assertThat(new String(reply, UTF_8)).isEqualTo("hi");
      }
    } finally {
      d.stop();
    }
  }

  @Test
  void sectionsInstallTheirMiddlewareInDocumentOrderBeforeTheProgramsOwn() throws Exception {
    Seen seen = new Seen();
    String yaml =
        SELF
            + "logging:\n  tags: {label: first, procedures: [echo]}\n"
            + "tagging:\n  label: second\n";
    Dispatcher.Builder b = loader(seen).load("tagged", new StringReader(yaml));
    b.unaryInboundMiddleware(
        (request, next) -> {
          seen.lines.add("code " + request.meta().procedure());
          return next.handle(request);
        });
    callTwice(b);
    assertThat(seen.lines)
        .containsExactly("first echo", "second echo", "code echo", "second other", "code other");

    Seen swapped = new Seen();
    callTwice(
        loader(swapped)
            .load(
                "tagged",
                new StringReader(
                    SELF + "tagging: {label: second}\nlogging:\n  tags: {label: first}\n")));
    assertThat(swapped.lines)
        .containsExactly("second echo", "first echo", "second other", "first other");
  }

  @Test
  void aSectionWithNoValueIsReadAsEmpty() {
    Seen seen = new Seen();
    assertThat(problems(loader(seen), "tagging:\n"))
        .containsExactly("tagging.label: missing required key");
  }

  static Stream<Arguments> badSections() {
    return Stream.of(
        Arguments.of("tagging: {}\n", List.of("tagging.label: missing required key")),
        Arguments.of(
            "tagging: {label: x, colour: red}\n",
            List.of("tagging.colour: unknown key (known keys here: label, procedures)")),
        Arguments.of("tagging: [x]\n", List.of("tagging: expected a mapping, got a list")),
        Arguments.of(
            "logging:\n  tags: {label: x, procedures: echo}\n",
            List.of("logging.tags.procedures: expected a list, got a string")),
        Arguments.of(
            "logging:\n  tags: {label: x, procedures: [echo, [other]]}\n",
            List.of("logging.tags.procedures[1]: expected a string, got a list")),
        Arguments.of(
            "logging:\n  lifecycle: false\n  tag: {label: x}\n",
            List.of("logging.tag: unknown key (known keys here: levels, lifecycle, tags)")),
        Arguments.of(
            "tagged: {label: x}\n",
            List.of(
                "tagged: unknown key (known keys here: inbounds, logging, metrics, outbounds,"
                    + " tagging, transports)")),
        // applying fails only once the rest is valid; reported at the section's path
        Arguments.of("tagging: {label: throw}\n", List.of("tagging: cannot apply \"throw\"")),
        // every section's problems, in document order, with the others'
        Arguments.of(
            "tagging: {}\ntransports:\n  in-memory: {streamWindow: many}\nlogging:\n  tags: {label: [x]}\n",
            List.of(
                "tagging.label: missing required key",
                "transports.in-memory.streamWindow: not an integer: \"many\"",
                "logging.tags.label: expected a string, got a list")));
  }

  @ParameterizedTest(name = "[{index}] {1}")
  @MethodSource("badSections")
  void problemsHaveTheKeyPath(String yaml, List<String> expected) {
    Seen seen = new Seen();
    assertThat(problems(loader(seen), yaml)).containsExactlyElementsOf(expected);
    assertThat(seen.applied).hasValue(0);
  }

  @Test
  void nothingIsAppliedWhenAnotherPartOfTheDocumentIsWrong() {
    Seen seen = new Seen();
    assertThat(
            problems(
                loader(seen),
                "tagging: {label: x}\ntransports:\n  in-memory: {streamWindow: many}\n"))
        .containsExactly("transports.in-memory.streamWindow: not an integer: \"many\"");
    assertThat(seen.applied).hasValue(0);
  }

  @Test
  void withoutItsSpecTheSectionIsAnUnknownKey() {
    assertThat(problems(YarpcConfig.loader(), "tagging: {label: x}\n"))
        .containsExactly(
            "tagging: unknown key (known keys here: inbounds, logging, metrics, outbounds,"
                + " transports)");
  }

  @Test
  void theProvidedObjectIsFoundByTypeThenBySubtype() throws Exception {
    class Loud extends Seen {}
    Loud loud = new Loud();
    YarpcConfig.Loader bySubtype =
        YarpcConfig.loader()
            .transportSpec(new InMemoryTransportSpec())
            .sectionSpec(new TaggingSectionSpec("tagging"))
            .provide(Loud.class, loud);
    callTwice(bySubtype.load("tagged", new StringReader(SELF + "tagging: {label: loud}\n")));
    assertThat(loud.lines).containsExactly("loud echo", "loud other");

    Seen exact = new Seen();
    Loud other = new Loud();
    callTwice(
        bySubtype
            .provide(Loud.class, other) // replaces loud
            .provide(Seen.class, exact) // asked for exactly: wins over the subtype's
            .load("tagged", new StringReader(SELF + "tagging: {label: exact}\n")));
    assertThat(exact.lines).containsExactly("exact echo", "exact other");
    assertThat(other.lines).isEmpty();
    assertThat(loud.lines).hasSize(2);

    assertThat(
            problems(
                YarpcConfig.loader().sectionSpec(new TaggingSectionSpec("tagging")),
                "tagging: {label: x}\n"))
        .containsExactly("tagging: needs a Seen: YarpcConfig.loader().provide(Seen.class, ...)");
    assertThatThrownBy(() -> YarpcConfig.loader().provide(Seen.class, null))
        .isInstanceOf(NullPointerException.class);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "inbounds",
        "outbounds",
        "transports",
        "logging",
        "logging.lifecycle",
        "logging.",
        "logging.levels.x",
        "metrics.x",
        ".x",
        ""
      })
  void aSectionSpecMayNotTakeTheseKeys(String key) {
    assertThatThrownBy(
            () ->
                YarpcConfig.loader()
                    .sectionSpec(new TaggingSectionSpec(key))
                    .load("tagged", new StringReader("")))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(
            "a SectionSpec may not have the key \""
                + key
                + "\" (io.yarpc.config.TaggingSectionSpec): it takes a top-level key other than"
                + " inbounds, logging, outbounds, transports, or logging.<key> other than"
                + " logging.lifecycle");
  }

  @Test
  void aSpecForAKeyOfYarpcGosReplacesTheProblemThatNamesTheModule() {
    Seen seen = new Seen();
    assertThat(
            problems(
                YarpcConfig.loader()
                    .sectionSpec(new TaggingSectionSpec("metrics"))
                    .provide(Seen.class, seen),
                "metrics: {label: m}\nlogging:\n  levels: {clientError: info}\n"))
        .containsExactly(
            "logging.levels: needs the module io.yarpc:yarpc-observability (its YarpcCallLogs"
                + " reads this section) on the class path: add it, or remove the key");
  }

  private static List<String> problems(YarpcConfig.Loader loader, String yaml) {
    return Fixtures.problems(loader, YarpcConfig.parse(new StringReader(yaml)));
  }
}
