package io.yarpc.observability.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.slf4j.event.Level.DEBUG;
import static org.slf4j.event.Level.ERROR;
import static org.slf4j.event.Level.INFO;
import static org.slf4j.event.Level.TRACE;
import static org.slf4j.event.Level.WARN;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.yarpc.CallOptions;
import io.yarpc.Dispatcher;
import io.yarpc.config.ConfigException;
import io.yarpc.config.YarpcConfig;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.observability.logging.CapturingLogger;
import io.yarpc.observability.logging.CapturingLogger.Line;
import io.yarpc.observability.logging.YarpcCallLogs;
import io.yarpc.observability.metrics.Loopback;
import io.yarpc.observability.metrics.Scrape;
import io.yarpc.observability.metrics.YarpcMetrics;
import io.yarpc.transport.http.HttpInbound;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.Logger;
import org.slf4j.event.Level;

/**
 * A configuration file's {@code metrics} and {@code logging.levels} sections (yarpc-go's), read by this
 * module's section specs, which yarpc-config finds on the class path: a server and a client dispatcher
 * loaded from YAML call each other over HTTP on loopback; their meters lack the blocked tags and their
 * call-log lines have the file's levels. Bad values fail with their key paths; code that installs
 * metrics or call logs on a builder whose file did is refused.
 */
@Timeout(60)
class ConfigSectionsTest {
  private static final String SERVER = "config-server";
  private static final String CLIENT = "config-client";
  private static final CallOptions OPTIONS = CallOptions.timeout(Duration.ofSeconds(10));
  private static final byte[] HELLO = "hello".getBytes(StandardCharsets.UTF_8);

  private static final String SERVER_BASE =
      "inbounds:\n  http: {address: \"127.0.0.1:0\"}\ntransports:\n  http: {eventLoopThreads: 1}\n";
  private static final String CLIENT_BASE =
      "outbounds:\n  "
          + SERVER
          + ":\n    http: {url: \"http://${SERVER}/\"}\ntransports:\n  http: {eventLoopThreads: 1}\n";

  /** The registry (null: none) and logger given to the loader of one dispatcher. */
  private record Side(MeterRegistry registry, CapturingLogger log) {
    static Side of(MeterRegistry registry, String name) {
      return new Side(registry, new CapturingLogger(name, TRACE));
    }

    YarpcConfig.Loader loader() {
      YarpcConfig.Loader loader = YarpcConfig.loader().provide(Logger.class, log);
      return registry == null ? loader : loader.provide(MeterRegistry.class, registry);
    }
  }

  /**
   * Starts a server loaded from {@code SERVER_BASE + serverSections} and a client loaded from {@code
   * CLIENT_BASE + clientSections}; the client calls {@code echo} (a success), {@code bad} (a caller
   * failure: invalid-argument) and {@code broken} (a server failure: internal); stops both, so that
   * every call has ended and logged.
   */
  private static void run(String serverSections, Side server, String clientSections, Side client)
      throws Exception {
    Dispatcher s =
        server.loader().load(SERVER, new StringReader(SERVER_BASE + serverSections)).build();
    s.register(Loopback.procedures());
    s.start();
    try {
      String hostPort = ((HttpInbound) s.inbounds().get(0)).hostPort();
      Dispatcher c =
          client
              .loader()
              .environment(Map.of("SERVER", hostPort)::get)
              .load(CLIENT, new StringReader(CLIENT_BASE + clientSections))
              .build();
      c.start();
      try {
        RawClient raw = RawClient.of(c.clientConfig(SERVER));
        assertThat(raw.call("echo", HELLO, OPTIONS).get(10, TimeUnit.SECONDS)).isEqualTo(HELLO);
        for (String failing : List.of("bad", "broken")) {
          assertThat(
                  raw.call(failing, HELLO, OPTIONS).handle((v, e) -> e).get(10, TimeUnit.SECONDS))
              .isNotNull();
        }
      } finally {
        c.stop();
      }
    } finally {
      s.stop();
    }
  }

  /** The level of each procedure's one line, or null for none (a procedure with several fails). */
  private static Map<String, Level> levels(CapturingLogger log) {
    Map<String, Level> out = new HashMap<>();
    for (String procedure : List.of("echo", "bad", "broken")) {
      List<Line> lines = log.linesFor(procedure);
      assertThat(lines).as("lines for %s: %s", procedure, log.lines()).hasSizeLessThan(2);
      out.put(procedure, lines.isEmpty() ? null : lines.get(0).level());
    }
    return out;
  }

  private static Map<String, Level> expect(Level echo, Level bad, Level broken) {
    Map<String, Level> m = new HashMap<>();
    m.put("echo", echo);
    m.put("bad", bad);
    m.put("broken", broken);
    return m;
  }

  @Test
  void aFileInstallsMetricsWithoutTheBlockedTagsAndCallLogsAtItsLevels() throws Exception {
    Side server = Side.of(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), "server");
    Side client = Side.of(new SimpleMeterRegistry(), "client");
    run(
        String.join(
            "\n",
            "metrics:",
            "  tagsBlocklist: [source, routing_delegate]",
            "logging:",
            "  lifecycle: false",
            "  levels:",
            "    success: info",
            "    inbound: {serverError: warn}",
            ""),
        server,
        String.join(
            "\n",
            "metrics:",
            "  tagsBlocklist: [procedure]",
            "logging:",
            "  levels:",
            "    clientError: info",
            ""),
        client);

    // the server's Prometheus scrape: one series per procedure, source and routing_delegate dropped
    Scrape scrape = Scrape.of((PrometheusMeterRegistry) server.registry());
    assertThat(scrape.counters("procedure", "source", "routing_delegate", "dest", "direction"))
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                "calls_total{procedure=echo,source=__dropped__,routing_delegate=__dropped__,"
                    + "dest=config-server,direction=inbound}",
                1.0,
                "calls_total{procedure=bad,source=__dropped__,routing_delegate=__dropped__,"
                    + "dest=config-server,direction=inbound}",
                1.0,
                "calls_total{procedure=broken,source=__dropped__,routing_delegate=__dropped__,"
                    + "dest=config-server,direction=inbound}",
                1.0,
                "successes_total{procedure=echo,source=__dropped__,routing_delegate=__dropped__,"
                    + "dest=config-server,direction=inbound}",
                1.0,
                "caller_failures_total{procedure=bad,source=__dropped__,"
                    + "routing_delegate=__dropped__,dest=config-server,direction=inbound}",
                1.0,
                "server_failures_total{procedure=broken,source=__dropped__,"
                    + "routing_delegate=__dropped__,dest=config-server,direction=inbound}",
                1.0));

    // the client's SimpleMeterRegistry: the procedure dropped, so the three calls are one series
    List<Counter> calls = List.copyOf(client.registry().find("calls").counters());
    assertThat(calls).hasSize(1);
    assertThat(calls.get(0).count()).isEqualTo(3.0);
    assertThat(calls.get(0).getId().getTag("procedure")).isEqualTo("__dropped__");
    assertThat(calls.get(0).getId().getTag("source")).isEqualTo(CLIENT);
    assertThat(calls.get(0).getId().getTag("routing_delegate")).isEqualTo("default");
    assertThat(calls.get(0).getId().getTag("direction")).isEqualTo("outbound");

    // the server logs inbound calls: success INFO (the file), bad WARN (yarpc-go's inbound
    // default),
    // broken WARN (the file's inbound serverError, which wins for that direction)
    assertThat(levels(server.log())).isEqualTo(expect(INFO, WARN, WARN));
    assertThat(server.log().linesFor("echo").get(0).message())
        .isEqualTo("Handled inbound request.");
    // the client logs outbound calls: success DEBUG (default), bad INFO (the file), broken ERROR
    assertThat(levels(client.log())).isEqualTo(expect(DEBUG, INFO, ERROR));
    assertThat(client.log().linesFor("bad").get(0).fields())
        .containsEntry("direction", "outbound")
        .containsEntry("errorCode", "invalid-argument");
  }

  /**
   * Both dispatchers load the same {@code logging.levels}; the server's lines are inbound, the client's
   * outbound, for echo, bad and broken.
   */
  static Stream<Arguments> levelFiles() {
    return Stream.of(
        // an empty section installs call logs with yarpc-go's defaults
        Arguments.of("{}", expect(DEBUG, WARN, ERROR), expect(DEBUG, ERROR, ERROR)),
        Arguments.of(
            "{success: info, clientError: info}",
            expect(INFO, INFO, ERROR),
            expect(INFO, INFO, ERROR)),
        // a direction's own level wins over the shared one, whatever the order of the keys
        Arguments.of(
            "{inbound: {serverError: error}, serverError: warn, outbound: {success: off}}",
            expect(DEBUG, WARN, ERROR),
            expect(null, ERROR, WARN)),
        // zap's names in capitals too; dpanic, panic and fatal log at ERROR (slf4j's highest)
        Arguments.of(
            "{inbound: {clientError: DEBUG, success: Info}, outbound: {clientError: fatal}}",
            expect(INFO, DEBUG, ERROR),
            expect(DEBUG, ERROR, ERROR)),
        Arguments.of(
            "{success: trace, serverError: dpanic, clientError: panic}",
            expect(TRACE, ERROR, ERROR),
            expect(TRACE, ERROR, ERROR)),
        Arguments.of(
            "{success: \"${SUCCESS_LEVEL:warn}\", clientError: off, serverError: off}",
            expect(WARN, null, null),
            expect(WARN, null, null)));
  }

  @ParameterizedTest(name = "[{index}] {0}")
  @MethodSource("levelFiles")
  void callLogsHaveTheLevelsOfTheFile(
      String levels, Map<String, Level> inbound, Map<String, Level> outbound) throws Exception {
    Side server = Side.of(new SimpleMeterRegistry(), "server");
    Side client = Side.of(new SimpleMeterRegistry(), "client");
    String section = "logging:\n  levels: " + levels + "\n";
    run(section, server, section, client);
    assertThat(levels(server.log())).isEqualTo(inbound);
    assertThat(levels(client.log())).isEqualTo(outbound);
    assertThat(server.registry().getMeters()).isEmpty(); // no metrics section: no metrics
  }

  /** yarpc-go's two documented logging examples (yarpc-config's fixtures) load and set their levels. */
  @ParameterizedTest
  @ValueSource(strings = {"doc-logging.yaml", "doc-logging-directional.yaml"})
  void yarpcGosLoggingExamplesLoad(String fixture) throws Exception {
    String text =
        Files.readString(
            Path.of("../yarpc-config/src/test/resources/yarpc-go", fixture),
            StandardCharsets.UTF_8);
    Side server = Side.of(new SimpleMeterRegistry(), "server");
    Side client = Side.of(new SimpleMeterRegistry(), "client");
    run(text, server, text, client);
    if (fixture.equals("doc-logging.yaml")) { // clientError: info
      assertThat(levels(server.log())).isEqualTo(expect(DEBUG, INFO, ERROR));
      assertThat(levels(client.log())).isEqualTo(expect(DEBUG, INFO, ERROR));
    } else { // inbound: {success: debug}, yarpc-go's default: call logs with the defaults
      assertThat(levels(server.log())).isEqualTo(expect(DEBUG, WARN, ERROR));
      assertThat(levels(client.log())).isEqualTo(expect(DEBUG, ERROR, ERROR));
    }
  }

  @Test
  void withNoRegistryProvidedMetricsGoToMicrometersGlobalRegistry() throws Exception {
    SimpleMeterRegistry global = new SimpleMeterRegistry();
    Metrics.addRegistry(global);
    try {
      run("metrics: {}\n", Side.of(null, "server"), "", Side.of(null, "client"));
      List<Counter> calls = List.copyOf(global.find("calls").tag("dispatcher", SERVER).counters());
      assertThat(calls).hasSize(3);
      assertThat(calls).allSatisfy(c -> assertThat(c.count()).isEqualTo(1.0));
      assertThat(global.find("calls").tag("dispatcher", CLIENT).counters()).isEmpty();
    } finally {
      Metrics.removeRegistry(global);
    }
  }

  // -------------------------------------------------------------------------------------------------
  // Bad values

  static Stream<Arguments> badFiles() {
    String tags =
        "[source, dest, transport, procedure, encoding, routing_key, routing_delegate, direction,"
            + " rpc_type]";
    String levelNames = "not one of trace, debug, info, warn, error, dpanic, panic, fatal, off: ";
    String deprecated =
        "not supported: yarpc-go's deprecated level, for which it logs application errors and"
            + " other failures apart; yarpc-java's call logs tell failures apart by fault: use"
            + " clientError and serverError";
    return Stream.of(
        Arguments.of(
            "metrics: {tagsBlocklist: [routing_delegate, caller]}",
            List.of("metrics.tagsBlocklist[1]: unknown tag \"caller\"; the tags are " + tags)),
        Arguments.of(
            "metrics: {tagsBlocklist: routing_key}",
            List.of("metrics.tagsBlocklist: expected a list, got a string")),
        Arguments.of(
            "metrics: {tagsBlocklist: [{name: source}]}",
            List.of("metrics.tagsBlocklist[0]: expected a string, got a mapping")),
        Arguments.of(
            "metrics: {maxEdges: 0}",
            List.of("metrics.maxEdges: maxEdges must be at least 1, got 0")),
        Arguments.of(
            "metrics: {tagBlocklist: [source]}",
            List.of(
                "metrics.tagBlocklist: unknown key (known keys here: maxEdges, tagsBlocklist)")),
        Arguments.of("metrics: [source]", List.of("metrics: expected a mapping, got a list")),
        Arguments.of(
            "logging: {levels: {success: verbose}}",
            List.of("logging.levels.success: " + levelNames + "\"verbose\"")),
        Arguments.of(
            "logging: {levels: {inbound: {clientError: [warn]}}}",
            List.of("logging.levels.inbound.clientError: expected a string, got a list")),
        Arguments.of(
            "logging: {levels: {outbound: {serverError: \"${LEVEL}\"}}}",
            List.of(
                "logging.levels.outbound.serverError: variable \"LEVEL\" is not set and"
                    + " \"${LEVEL}\" gives no default")),
        Arguments.of(
            "logging: {levels: {failure: error}}",
            List.of("logging.levels.failure: " + deprecated)),
        Arguments.of(
            "logging: {levels: {outbound: {applicationError: warn}}}",
            List.of("logging.levels.outbound.applicationError: " + deprecated)),
        Arguments.of(
            "logging: {levels: {sucess: info}}",
            List.of(
                "logging.levels.sucess: unknown key (known keys here: clientError, inbound,"
                    + " outbound, serverError, success)")),
        Arguments.of(
            "logging: {levels: {inbound: warn}}",
            List.of("logging.levels.inbound: expected a mapping, got a string")),
        Arguments.of(
            "logging: {levels: [info]}", List.of("logging.levels: expected a mapping, got a list")),
        // every problem of both sections, in document order
        Arguments.of(
            "logging: {levels: {success: loud}}\nmetrics: {tagsBlocklist: [nope], maxEdges: -1}",
            List.of(
                "logging.levels.success: " + levelNames + "\"loud\"",
                "metrics.tagsBlocklist[0]: unknown tag \"nope\"; the tags are " + tags,
                "metrics.maxEdges: maxEdges must be at least 1, got -1")));
  }

  @ParameterizedTest(name = "[{index}] {0}")
  @MethodSource("badFiles")
  void badValuesAreProblemsAtTheirKeyPath(String yaml, List<String> expected) {
    assertThatThrownBy(
            () ->
                YarpcConfig.loader()
                    .environment(name -> null)
                    .load(SERVER, new StringReader(yaml + "\n")))
        .isInstanceOfSatisfying(
            ConfigException.class,
            e ->
                assertThat(e.problems())
                    .extracting(ConfigException.Problem::toString)
                    .containsExactlyElementsOf(expected));
  }

  // -------------------------------------------------------------------------------------------------
  // Installing twice

  @Test
  void codeCannotInstallWhatTheFileInstalled() {
    Dispatcher.Builder b =
        YarpcConfig.loader()
            .provide(MeterRegistry.class, new SimpleMeterRegistry())
            .load(SERVER, new StringReader("metrics: {}\nlogging: {levels: {}}\n"));
    assertThatThrownBy(() -> YarpcMetrics.builder(new SimpleMeterRegistry()).build().install(b))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(
            "metrics are already installed on the builder of dispatcher \"config-server\" (by an"
                + " earlier install, or by the metrics section of the configuration file it was"
                + " loaded from): install them once");
    assertThatThrownBy(() -> YarpcCallLogs.builder().build().install(b))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(
            "call logs are already installed on the builder of dispatcher \"config-server\" (by an"
                + " earlier install, or by the logging.levels section of the configuration file it"
                + " was loaded from): install them once");
    // metrics without a registry install nothing, so they are no second install
    YarpcMetrics.builder(null).build().install(b);
    b.build().stop();
  }

  @Test
  void withoutTheSectionsCodeInstallsThemOnce() {
    Dispatcher.Builder b =
        YarpcConfig.load(SERVER, new StringReader("logging: {lifecycle: false}\n"));
    YarpcMetrics metrics = YarpcMetrics.builder(new SimpleMeterRegistry()).build();
    metrics.install(b);
    YarpcCallLogs.builder().build().install(b);
    assertThatThrownBy(() -> metrics.install(b)).isInstanceOf(IllegalStateException.class);
    // another dispatcher's builder is another story
    metrics.install(Dispatcher.builder(CLIENT));
    b.build().stop();
  }
}
