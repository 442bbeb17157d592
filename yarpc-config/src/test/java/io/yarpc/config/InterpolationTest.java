package io.yarpc.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.Dispatcher;
import io.yarpc.peer.SinglePeerChooser;
import io.yarpc.transport.grpc.GrpcInbound;
import io.yarpc.transport.grpc.GrpcOutbound;
import java.io.StringReader;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code ${VAR}} and {@code ${VAR:default}} in a document: from the environment by default, from the
 * loader's lookup when one is given; in strings, numbers, durations and addresses; problems with the key
 * path when a variable is missing or a reference is malformed.
 */
class InterpolationTest {
  private static final String YAML =
      String.join(
          "\n",
          "inbounds:",
          "  grpc:",
          "    address: ${GRPC_HOST:127.0.0.1}:${GRPC_PORT}",
          "    limits:",
          "      maxConnections: 1${MAX_CONNECTIONS}",
          "    deadlinePolicy:",
          "      defaultTimeout: ${TIMEOUT:5s}",
          "outbounds:",
          "  users:",
          "    grpc:",
          "      peer: ${USERS_PEER}",
          "");

  private static Dispatcher load(Map<String, String> env) {
    return YarpcConfig.loader()
        .environment(env::get)
        .load("keyvalue", new StringReader(YAML))
        .build();
  }

  @Test
  void valuesComeFromTheLookup() {
    Dispatcher d =
        load(
            Map.of(
                "GRPC_PORT", "0",
                "MAX_CONNECTIONS", "000",
                "TIMEOUT", "250ms",
                "USERS_PEER", "10.1.2.3:5000"));
    try {
      GrpcInbound in = (GrpcInbound) d.inbounds().get(0);
      assertThat(in).hasToString("GrpcInbound{/127.0.0.1:0}");
      assertThat(in.limits().maxConnections()).isEqualTo(1000);
      assertThat(in.deadlinePolicy().defaultTimeout()).isEqualTo(Duration.ofMillis(250));
      GrpcOutbound out = (GrpcOutbound) d.outbounds().get("users").unary();
      assertThat(((SinglePeerChooser) out.chooser()).identifier()).isEqualTo("10.1.2.3:5000");
    } finally {
      d.stop();
    }
  }

  @Test
  void defaultsApplyWhenAVariableIsUnset() {
    Dispatcher d =
        load(Map.of("GRPC_PORT", "0", "MAX_CONNECTIONS", "0", "USERS_PEER", "127.0.0.1:1"));
    try {
      GrpcInbound in = (GrpcInbound) d.inbounds().get(0);
      assertThat(in.deadlinePolicy().defaultTimeout()).isEqualTo(Duration.ofSeconds(5));
      assertThat(in.limits().maxConnections()).isEqualTo(10);
    } finally {
      d.stop();
    }
  }

  @Test
  void missingVariablesAndBadValuesAreProblemsWithTheirPaths() {
    try {
      load(Map.of("MAX_CONNECTIONS", "lots", "TIMEOUT", "soon"));
      throw new AssertionError("no ConfigException");
    } catch (ConfigException e) {
      assertThat(e.problems())
          .extracting(Object::toString)
          .containsExactly(
              "inbounds.grpc.address: variable \"GRPC_PORT\" is not set and"
                  + " \"${GRPC_HOST:127.0.0.1}:${GRPC_PORT}\" gives no default",
              "inbounds.grpc.limits.maxConnections: not an integer: \"1lots\"",
              "inbounds.grpc.deadlinePolicy.defaultTimeout: not a duration: \"soon\" (not a number"
                  + " followed by a unit; e.g. 500ms, 1m30s)",
              "outbounds.users.grpc.peer: variable \"USERS_PEER\" is not set and \"${USERS_PEER}\""
                  + " gives no default");
    }
  }

  @Test
  void theEnvironmentIsTheDefaultLookup() {
    String path = System.getenv("PATH");
    assertThat(path).as("PATH is set in the test's environment").isNotNull();
    try {
      YarpcConfig.load(
          "keyvalue", new StringReader("inbounds:\n  http:\n    address: \"${PATH}\"\n"));
      throw new AssertionError("no ConfigException");
    } catch (ConfigException e) {
      assertThat(e.problems().get(0).message()).contains(path);
    }
  }
}
