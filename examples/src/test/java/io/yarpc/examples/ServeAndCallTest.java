package io.yarpc.examples;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Starts {@code serve} in process on free ports and runs {@code call} against it over each transport, in
 * the raw, JSON and protobuf encodings, successes and failures.
 */
@Timeout(120)
class ServeAndCallTest {
  private static Serve serve;

  @BeforeAll
  static void startServe() {
    serve = Serve.start("127.0.0.1", 0, 0, 0);
  }

  @AfterAll
  static void stopServe() {
    if (serve != null) {
      serve.close();
      assertThat(serve.dispatcher().isRunning()).isFalse();
    }
  }

  /** What one {@code call} printed and returned. */
  record Run(int status, String out, String err) {
    JsonObject json() {
      return JsonParser.parseString(out).getAsJsonObject();
    }
  }

  private static Run call(String transport, String... args) {
    List<String> all =
        new ArrayList<>(
            List.of(
                "--peer",
                serve.peers().get(transport),
                "--transport",
                transport,
                "--service",
                "yarpc-test",
                "--timeout",
                "10s"));
    all.addAll(List.of(args));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status =
        CallCommand.run(
            all.toArray(String[]::new),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Run(
        status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  @ParameterizedTest
  @ValueSource(strings = {"http", "grpc", "tchannel"})
  void rawEchoReturnsBodyAndHeaders(String transport) {
    Run run =
        call(
            transport,
            "--procedure",
            "echo/raw",
            "--encoding",
            "raw",
            "--header",
            "Token=abc",
            "--header",
            "x-other=1",
            "hello, raw");
    assertThat(run.status()).as(run.err()).isZero();
    assertThat(run.json().get("body").getAsString()).isEqualTo("hello, raw");
    assertThat(run.json().getAsJsonObject("headers").get("token").getAsString()).isEqualTo("abc");
    assertThat(run.json().getAsJsonObject("headers").get("x-other").getAsString()).isEqualTo("1");
  }

  @ParameterizedTest
  @ValueSource(strings = {"http", "grpc", "tchannel"})
  void jsonEchoReturnsBodyAndHeaders(String transport) {
    Run run =
        call(
            transport,
            "--procedure",
            "echo",
            "--encoding",
            "json",
            "--header",
            "k=v",
            "{\"token\":\"t\",\"n\":[1,2]}");
    assertThat(run.status()).as(run.err()).isZero();
    assertThat(run.json().getAsJsonObject("body"))
        .isEqualTo(JsonParser.parseString("{\"token\":\"t\",\"n\":[1,2]}"));
    assertThat(run.json().getAsJsonObject("headers").get("k").getAsString()).isEqualTo("v");
  }

  @ParameterizedTest
  @ValueSource(strings = {"http", "grpc", "tchannel"})
  void protoEchoService(String transport) {
    Run run =
        call(
            transport,
            "--procedure",
            "yarpc.examples.echo.Echo::Echo",
            "--encoding",
            "proto",
            "{\"payload\":\"aGVsbG8=\",\"token\":\"tok\"}");
    assertThat(run.status()).as(run.err()).isZero();
    assertThat(run.json().getAsJsonObject("body"))
        .isEqualTo(JsonParser.parseString("{\"payload\":\"aGVsbG8=\",\"token\":\"tok\"}"));
  }

  @ParameterizedTest
  @ValueSource(strings = {"http", "grpc", "tchannel"})
  void protoKeyValueSetThenGet(String transport) {
    Run set =
        call(
            transport,
            "--procedure",
            "yarpc.examples.keyvalue.KeyValue::SetValue",
            "--encoding",
            "proto",
            "{\"key\":\"k-" + transport + "\",\"value\":\"v-" + transport + "\"}");
    assertThat(set.status()).as(set.err()).isZero();
    assertThat(set.json().getAsJsonObject("body").size()).isZero();

    Run get =
        call(
            transport,
            "--procedure",
            "yarpc.examples.keyvalue.KeyValue::GetValue",
            "--encoding",
            "proto",
            "{\"key\":\"k-" + transport + "\"}");
    assertThat(get.status()).as(get.err()).isZero();
    assertThat(get.json().getAsJsonObject("body").get("value").getAsString())
        .isEqualTo("v-" + transport);
  }

  @ParameterizedTest
  @ValueSource(strings = {"http", "grpc", "tchannel"})
  void protoMissingKeyIsNotFoundWithDetails(String transport) {
    Run run =
        call(
            transport,
            "--procedure",
            "yarpc.examples.keyvalue.KeyValue::GetValue",
            "--encoding",
            "proto",
            "{\"key\":\"absent\"}");
    assertThat(run.status()).isEqualTo(1);
    assertThat(run.out()).isEmpty();
    assertThat(run.err())
        .contains("Error: code:not-found", "no value for key \"absent\"")
        .contains("\"reason\":\"KEY_NOT_FOUND\"", "\"key\":\"absent\"");
  }

  @ParameterizedTest
  @ValueSource(strings = {"http", "grpc", "tchannel"})
  void protoJsonEncodingOfTheSameService(String transport) {
    Run run =
        call(
            transport,
            "--procedure",
            "yarpc.examples.echo.Echo::Echo",
            "--encoding",
            "json",
            "{\"token\":\"as-json\"}");
    assertThat(run.status()).as(run.err()).isZero();
    assertThat(run.json().getAsJsonObject("body").get("token").getAsString()).isEqualTo("as-json");
  }

  @ParameterizedTest
  @ValueSource(strings = {"http", "grpc", "tchannel"})
  void handlerExceptionIsUnknown(String transport) {
    Run run = call(transport, "--procedure", "unexpected-error", "--encoding", "json");
    assertThat(run.status()).isEqualTo(1);
    assertThat(run.err()).contains("Error: code:unknown");
  }

  @ParameterizedTest
  @ValueSource(strings = {"http", "grpc", "tchannel"})
  void callPastItsTimeoutIsDeadlineExceeded(String transport) {
    Run run =
        call(
            transport,
            "--procedure",
            "sleep/raw",
            "--encoding",
            "raw",
            "--timeout",
            "100ms",
            "5000");
    assertThat(run.status()).isEqualTo(1);
    assertThat(run.err()).contains("Error: code:deadline-exceeded");
  }

  @ParameterizedTest
  @ValueSource(strings = {"http", "grpc", "tchannel"})
  void waitForTimeoutFailsWithDeadlineExceeded(String transport) {
    Run run =
        call(
            transport,
            "--procedure",
            "waitfortimeout/raw",
            "--encoding",
            "raw",
            "--timeout",
            "200ms");
    assertThat(run.status()).isEqualTo(1);
    assertThat(run.err()).contains("code:deadline-exceeded");
  }

  @Test
  void unknownProcedureFails() {
    Run run = call("http", "--procedure", "nope", "--encoding", "raw", "x");
    assertThat(run.status()).isEqualTo(1);
    assertThat(run.err()).contains("code:unimplemented", "nope");
  }

  @Test
  void badCommandLinesAreUsageErrors() {
    Run missingPeer =
        runCall("--transport", "http", "--service", "s", "--procedure", "p", "--encoding", "raw");
    assertThat(missingPeer.status()).isEqualTo(2);
    assertThat(missingPeer.err())
        .contains("missing --peer", "usage: java -jar yarpc-examples.jar call");

    Run badTransport =
        call("http", "--transport", "smoke-signals", "--procedure", "p", "--encoding", "raw");
    assertThat(badTransport.status()).isEqualTo(2);
    assertThat(badTransport.err()).contains("--transport must be http, grpc or tchannel");

    Run unknownMethod = call("grpc", "--procedure", "pkg.Nope::Nope", "--encoding", "proto", "{}");
    assertThat(unknownMethod.status()).isEqualTo(2);
    assertThat(unknownMethod.err()).contains("yarpc.examples.keyvalue.KeyValue::GetValue");

    Run streaming =
        call(
            "grpc",
            "--procedure",
            "yarpc.examples.keyvalue.KeyValue::Watch",
            "--encoding",
            "proto");
    assertThat(streaming.status()).isEqualTo(2);
    assertThat(streaming.err()).contains("streaming method");

    Run badJson = call("http", "--procedure", "echo", "--encoding", "json", "{not json");
    assertThat(badJson.status()).isEqualTo(2);
    assertThat(badJson.err()).contains("not valid JSON");

    Run badTimeout = call("http", "--procedure", "echo", "--encoding", "json", "--timeout", "soon");
    assertThat(badTimeout.status()).isEqualTo(2);
    assertThat(badTimeout.err()).contains("--timeout");
  }

  private static Run runCall(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status =
        CallCommand.run(
            args,
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Run(
        status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  @Test
  void bannerShowsAddressesAndACurlLine() {
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    serve.printBanner(new PrintStream(printed, true, StandardCharsets.UTF_8));
    String banner = printed.toString(StandardCharsets.UTF_8);
    assertThat(banner)
        .contains(
            serve.peers().get("http"), serve.peers().get("grpc"), serve.peers().get("tchannel"))
        .contains("curl -sS", "Rpc-Service: yarpc-test", "yarpc.examples.keyvalue.KeyValue::Watch")
        .contains("http://" + serve.peers().get("http") + "/health", "grpc.health.v1.Health");
  }
}
