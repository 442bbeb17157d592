package io.yarpc.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.StringReader;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Each bad document fails with exactly these problems: the key path of each and what is wrong there,
 * never a stack trace from inside a builder, never a key ignored in silence.
 */
class BadConfigTest {

  static List<String> problems(String yaml) {
    try {
      YarpcConfig.loader()
          .environment(Map.of("PORT", "8080")::get)
          .load("keyvalue", new StringReader(yaml));
      return List.of();
    } catch (ConfigException e) {
      return e.problems().stream().map(ConfigException.Problem::toString).toList();
    }
  }

  static Stream<Arguments> documents() {
    return Stream.of(
        // unknown keys
        Arguments.of(
            "name: keyvalue\n",
            List.of(
                "name: unknown key (known keys here: inbounds, logging, metrics, outbounds,"
                    + " transports)")),
        Arguments.of(
            "inbounds:\n  http:\n    adress: :8080\n",
            List.of(
                "inbounds.http.address: missing required key",
                "inbounds.http.adress: unknown key (known keys here: address, deadlinePolicy,"
                    + " disableHTTP2, disabled, health, healthPath, http2, idleTimeout, limits,"
                    + " readTimeout, shutdownTimeout, tls, type, writeTimeout)")),
        Arguments.of(
            "inbounds:\n  grpc:\n    address: :0\n    limits:\n      maxConections: 10\n",
            List.of(
                "inbounds.grpc.limits.maxConections: unknown key (known keys here:"
                    + " handshakeTimeout, idleTimeout, maxConcurrentCallsPerConnection,"
                    + " maxConnectionAge, maxConnectionAgeGrace, maxConnections, maxHeaderBytes,"
                    + " maxHeaderCount, maxPendingBytes, maxPendingBytesPerConnection,"
                    + " maxRequestLineLength, maxRequestSize, maxRstFramesPerWindow,"
                    + " permitKeepAliveTime, permitKeepAliveWithoutCalls, readTimeout,"
                    + " rstFramesWindow, writeTimeout)")),
        // wrong types
        Arguments.of("inbounds: [http]\n", List.of("inbounds: expected a mapping, got a list")),
        Arguments.of(
            "inbounds:\n  http:\n    address: :0\n    limits:\n      maxConnections: lots\n",
            List.of("inbounds.http.limits.maxConnections: not an integer: \"lots\"")),
        Arguments.of(
            "inbounds:\n  http:\n    address: :0\n    http2: yes\n",
            List.of("inbounds.http.http2: not a boolean (true or false): \"yes\"")),
        Arguments.of(
            "inbounds:\n  http:\n    address: {host: localhost}\n",
            List.of("inbounds.http.address: expected a string, got a mapping")),
        Arguments.of(
            "outbounds:\n  users:\n    http:\n      url: http://127.0.0.1:8080\n      addHeaders: [a]\n",
            List.of("outbounds.users.http.addHeaders: expected a mapping, got a list")),
        // builder refusals, at the key that was applied
        Arguments.of(
            "inbounds:\n  http:\n    address: :0\n    limits:\n      maxConnections: 0\n",
            List.of("inbounds.http.limits.maxConnections: maxConnections must be positive: 0")),
        Arguments.of(
            "inbounds:\n  http:\n    address: :0\n    healthPath: health\n",
            List.of("inbounds.http.healthPath: health path must start with '/': \"health\"")),
        // durations
        Arguments.of(
            "inbounds:\n  http:\n    address: :0\n    shutdownTimeout: 5\n",
            List.of(
                "inbounds.http.shutdownTimeout: not a duration: 5 (missing unit: write e.g. 5s or"
                    + " 5ms)")),
        Arguments.of(
            "inbounds:\n  http:\n    address: :0\n    shutdownTimeout: 1m30\n",
            List.of(
                "inbounds.http.shutdownTimeout: not a duration: \"1m30\" (missing unit; e.g. 500ms,"
                    + " 1m30s)")),
        Arguments.of(
            "inbounds:\n  http:\n    address: :0\n    shutdownTimeout: 2d\n",
            List.of(
                "inbounds.http.shutdownTimeout: not a duration: \"2d\" (unknown unit \"d\"; e.g."
                    + " 500ms, 1m30s)")),
        Arguments.of(
            "inbounds:\n  http:\n    address: :0\n    shutdownTimeout: thirty\n",
            List.of(
                "inbounds.http.shutdownTimeout: not a duration: \"thirty\" (not a number followed"
                    + " by a unit; e.g. 500ms, 1m30s)")),
        Arguments.of(
            "inbounds:\n  http:\n    address: :0\n    shutdownTimeout: -1s\n",
            List.of("inbounds.http.shutdownTimeout: must not be negative: \"-1s\"")),
        // URLs and addresses
        Arguments.of(
            "outbounds:\n  keyvalue:\n    unary:\n      http:\n        url: \"::\"\n",
            List.of("outbounds.keyvalue.unary.http.url: not a URL: \"::\"")),
        Arguments.of(
            "outbounds:\n  keyvalue:\n    http:\n      url: ftp://127.0.0.1/x\n",
            List.of(
                "outbounds.keyvalue.http.url: only http and https URLs are supported:"
                    + " \"ftp://127.0.0.1/x\"")),
        Arguments.of(
            "inbounds:\n  http:\n    address: localhost\n",
            List.of("inbounds.http.address: not host:port: \"localhost\" (no port)")),
        Arguments.of(
            "inbounds:\n  tchannel:\n    address: 127.0.0.1:70000\n",
            List.of(
                "inbounds.tchannel.address: not host:port: \"127.0.0.1:70000\" (the port must be 0 to"
                    + " 65535)")),
        Arguments.of(
            "outbounds:\n  users:\n    grpc:\n      address: users\n",
            List.of("outbounds.users.grpc.address: not host:port: \"users\" (no port)")),
        Arguments.of(
            "outbounds:\n  users:\n    tchannel:\n      round-robin:\n        peers: [127.0.0.1:1, localhost, 127.0.0.1:1]\n",
            List.of(
                "outbounds.users.tchannel.round-robin.peers[1]: not host:port: \"localhost\" (no port)",
                "outbounds.users.tchannel.round-robin.peers[2]: duplicate peer \"127.0.0.1:1\"")),
        Arguments.of(
            "outbounds:\n  users:\n    tchannel:\n      round-robin:\n        peers: []\n",
            List.of("outbounds.users.tchannel.round-robin.peers: must not be empty")),
        Arguments.of(
            "outbounds:\n  users:\n    tchannel:\n      round-robin: {failFast: true}\n",
            List.of(
                "outbounds.users.tchannel.round-robin: no peers: give them as \"peers: [host:port,"
                    + " ...]\" or name a peer list updater (none is registered: add"
                    + " yarpc-discovery for dns and peers-file)")),
        Arguments.of(
            "outbounds:\n  users:\n    tchannel:\n      round-robin:\n        peers:\n",
            List.of("outbounds.users.tchannel.round-robin.peers: must not be empty")),
        Arguments.of(
            "outbounds:\n  users:\n    tchannel:\n      round-robin:\n        dns: {name: users}\n",
            List.of(
                "outbounds.users.tchannel.round-robin: no peers: give them as \"peers: [host:port,"
                    + " ...]\" or name a peer list updater (none is registered: add"
                    + " yarpc-discovery for dns and peers-file)",
                "outbounds.users.tchannel.round-robin.dns: unknown key (known keys here:"
                    + " defaultChooseTimeout, failFast, outlierDetection, peers)")),
        Arguments.of(
            "outbounds:\n  users:\n    tchannel:\n      peer: 127.0.0.1:1\n      round-robin: {peers: [127.0.0.1:2]}\n",
            List.of(
                "outbounds.users.tchannel: give one of peer, with or a peer list"
                    + " (fewest-pending-requests, hashring32, random, round-robin,"
                    + " two-random-choices), got peer and round-robin")),
        // unknown transports and RPC types
        Arguments.of(
            "inbounds:\n  kafka: {queue: requests}\n",
            List.of("inbounds.kafka: unknown transport \"kafka\" (known: grpc, http, tchannel)")),
        Arguments.of(
            "inbounds:\n  mine:\n    type: kafka\n",
            List.of(
                "inbounds.mine.type: unknown transport \"kafka\" (known: grpc, http, tchannel)")),
        Arguments.of(
            "outbounds:\n  keyvalue:\n    oneway:\n      kafka: {queue: requests}\n",
            List.of(
                "outbounds.keyvalue.oneway.kafka: unknown transport \"kafka\" (known: grpc, http,"
                    + " tchannel)")),
        Arguments.of(
            "transports:\n  kafka: {brokers: 3}\n",
            List.of("transports.kafka: unknown transport \"kafka\" (known: grpc, http, tchannel)")),
        Arguments.of(
            "outbounds:\n  keyvalue:\n    stream:\n      http: {url: \"http://127.0.0.1:1/\"}\n",
            List.of(
                "outbounds.keyvalue.stream.http: transport \"http\" does not support stream"
                    + " outbounds")),
        Arguments.of(
            "outbounds:\n  keyvalue:\n    oneway:\n      grpc: {address: \"127.0.0.1:1\"}\n",
            List.of(
                "outbounds.keyvalue.oneway.grpc: transport \"grpc\" does not support oneway"
                    + " outbounds")),
        Arguments.of(
            "outbounds:\n  keyvalue:\n    http: {url: \"http://127.0.0.1:1/\"}\n    grpc: {address: \"127.0.0.1:1\"}\n",
            List.of(
                "outbounds.keyvalue: an outbound takes one transport, got http, grpc (use unary,"
                    + " oneway and stream for several)")),
        Arguments.of(
            "outbounds:\n  keyvalue:\n    unary:\n      http: {url: \"http://127.0.0.1:1/\"}\n    grpc: {address: \"127.0.0.1:1\"}\n",
            List.of(
                "outbounds.keyvalue.grpc: unknown key (known keys here: oneway, service, stream,"
                    + " unary)")),
        Arguments.of(
            "outbounds:\n  keyvalue:\n    http: {}\n",
            List.of(
                "outbounds.keyvalue.http: an HTTP outbound needs a url, a peer, or a peer list (e.g."
                    + " round-robin: {peers: [...]})")),
        // enums, TLS, deadlines
        Arguments.of(
            "inbounds:\n  http:\n    address: :0\n    tls: {mode: strict}\n",
            List.of(
                "inbounds.http.tls.mode: not one of disabled, permissive, enforced: \"strict\"")),
        Arguments.of(
            "transports:\n  grpc:\n    tls: {certFile: /nonexistent/cert.pem}\n",
            List.of(
                "transports.grpc.tls.keyFile: missing required key (certFile and keyFile go"
                    + " together)")),
        Arguments.of(
            "inbounds:\n  tchannel:\n    address: :0\n    deadlinePolicy: {requireDeadline: true, defaultTimeout: 1s}\n",
            List.of(
                "inbounds.tchannel.deadlinePolicy.requireDeadline: give either requireDeadline:"
                    + " true or a defaultTimeout, not both")),
        // logging and metrics: yarpc-observability reads metrics and logging.levels; it is not on
        // this module's class path, so they name it, once, at the section (not key by key)
        Arguments.of(
            "metrics:\n  tagsBlocklist: [routing_delegate]\n  whatever: 1\n",
            List.of(
                "metrics: needs the module io.yarpc:yarpc-observability (its YarpcMetrics reads this"
                    + " section) on the class path: add it, or remove the key")),
        Arguments.of(
            "logging:\n  lifecycle: false\n  levels:\n    clientError: info\n",
            List.of(
                "logging.levels: needs the module io.yarpc:yarpc-observability (its YarpcCallLogs"
                    + " reads this section) on the class path: add it, or remove the key")),
        Arguments.of(
            "logging:\n  level: debug\n",
            List.of("logging.level: unknown key (known keys here: levels, lifecycle)")),
        Arguments.of("logging: [lifecycle]\n", List.of("logging: expected a mapping, got a list")),
        Arguments.of(
            "logging:\n  lifecycle: maybe\n",
            List.of("logging.lifecycle: not a boolean (true or false): \"maybe\"")),
        // the document itself
        Arguments.of("- inbounds\n", List.of("the document must be a mapping, not a list")));
  }

  @ParameterizedTest(name = "[{index}] {1}")
  @MethodSource("documents")
  void reportsEveryProblemWithItsPath(String yaml, List<String> expected) {
    assertThat(problems(yaml)).containsExactlyElementsOf(expected);
  }

  @Test
  void oneExceptionListsEveryProblemInDocumentOrder() {
    String yaml =
        String.join(
            "\n",
            "inbounds:",
            "  http:",
            "    address: :0",
            "    readTimeout: soon",
            "  grpc: {}",
            "outbounds:",
            "  keyvalue:",
            "    unary:",
            "      http:",
            "        url: not a url",
            "transports:",
            "  tchannel:",
            "    connTimeout: 1",
            "unexpected: true",
            "");
    assertThatThrownBy(() -> YarpcConfig.load("keyvalue", new StringReader(yaml)))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            String.join(
                "\n",
                "invalid yarpc configuration: 5 problems",
                "  inbounds.http.readTimeout: not a duration: \"soon\" (not a number followed by a"
                    + " unit; e.g. 500ms, 1m30s)",
                "  inbounds.grpc.address: missing required key",
                "  outbounds.keyvalue.unary.http.url: not a URL: \"not a url\"",
                "  transports.tchannel.connTimeout: not a duration: 1 (missing unit: write e.g. 1s"
                    + " or 1ms)",
                "  unexpected: unknown key (known keys here: inbounds, logging, metrics, outbounds,"
                    + " transports)"));
  }

  @Test
  void theFileIsNamedInTheMessage() throws Exception {
    java.nio.file.Path file = java.nio.file.Files.createTempFile("yarpc", ".yaml");
    try {
      java.nio.file.Files.writeString(file, "inbounds:\n  http: {}\n");
      assertThatThrownBy(() -> YarpcConfig.load("keyvalue", file))
          .hasMessage(
              "invalid yarpc configuration ("
                  + file
                  + "): 1 problem\n  inbounds.http.address: missing required key");
    } finally {
      java.nio.file.Files.delete(file);
    }
  }

  @Test
  void aBadServiceNameIsAProblemToo() {
    assertThat(problems("inbounds:\n  http: {address: \":0\"}\n")).isEmpty();
    try {
      YarpcConfig.load("Key-Value", Map.of());
    } catch (ConfigException e) {
      assertThat(e.problems())
          .extracting(Object::toString)
          .containsExactly(
              "invalid service name \"Key-Value\": must start with a lower-case letter");
      return;
    }
    throw new AssertionError("no ConfigException");
  }

  @Test
  void yamlSyntaxErrorsAndDuplicateKeysAreReported() {
    assertThatThrownBy(() -> YarpcConfig.load("keyvalue", new StringReader("inbounds: [\n")))
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith(
            "invalid yarpc configuration (YAML): 1 problem\n  not valid YAML: ");
    assertThatThrownBy(
            () ->
                YarpcConfig.load(
                    "keyvalue",
                    new StringReader("inbounds:\n  http: {address: \":1\"}\n  http: {}\n")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("found duplicate key http");
  }

  @Test
  void jsonIsYamlToo() {
    Map<String, Object> doc =
        YarpcConfig.parse(
            new StringReader(
                "{\"inbounds\": {\"http\": {\"address\": \":0\"}},"
                    + " \"outbounds\": {\"users\": {\"grpc\": {\"address\": \"127.0.0.1:1\"}}}}"));
    io.yarpc.Dispatcher d = YarpcConfig.load("keyvalue", doc).build();
    try {
      assertThat(d.inbounds()).hasSize(1);
      assertThat(d.outbounds()).containsOnlyKeys("users");
    } finally {
      d.stop();
    }
  }
}
