package io.yarpc.observability.logging;

import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.CallOptions;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.errors.Code;
import io.yarpc.observability.logging.CapturingLogger.Line;
import io.yarpc.observability.metrics.Loopback;
import io.yarpc.transport.Body;
import io.yarpc.transport.ClientStream;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.StreamMessage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.event.Level;

/**
 * The call logs over each transport, captured by a logger given to the builder: one line per call, its
 * level by direction and outcome (yarpc-go's defaults, then overrides), and its fields.
 */
class CallLogsTest {
  private static final String SECRET = "header-value-that-must-not-be-logged";
  private static final CallOptions OPTIONS =
      CallOptions.builder().timeout(Duration.ofSeconds(10)).header("token", SECRET).build();
  private static final byte[] HELLO = "hello".getBytes(StandardCharsets.UTF_8);

  @ParameterizedTest
  @ValueSource(strings = {"http", "grpc", "tchannel"})
  void oneLinePerCallWithYarpcGoDefaults(String transport) throws Exception {
    CapturingLogger serverLog = new CapturingLogger("server", Level.TRACE);
    CapturingLogger clientLog = new CapturingLogger("client", Level.TRACE);
    try (Loopback lo =
        Loopback.start(
            transport,
            b -> YarpcCallLogs.builder().logger(serverLog).build().install(b),
            b -> YarpcCallLogs.builder().logger(clientLog).build().install(b))) {
      RawClient raw = RawClient.of(lo.client.clientConfig(Loopback.SERVER));
      raw.call("echo", HELLO, OPTIONS).get(10, TimeUnit.SECONDS);
      raw.call("bad", HELLO, OPTIONS).handle((v, e) -> null).get();
      raw.call("broken", HELLO, OPTIONS).handle((v, e) -> null).get();
      raw.call("slow", HELLO, OPTIONS).handle((v, e) -> null).get(); // the server times out
      raw.call("nope", HELLO, OPTIONS).handle((v, e) -> null).get();
      if (lo.streaming()) {
        stream(lo);
      }
    }
    // the dispatchers have stopped: every call has ended and logged

    Line echo = single(serverLog, "echo");
    assertThat(echo.level()).isEqualTo(Level.DEBUG);
    assertThat(echo.message()).isEqualTo("Handled inbound request.");
    assertThat(echo.fields())
        .containsEntry("source", Loopback.CLIENT)
        .containsEntry("dest", Loopback.SERVER)
        .containsEntry("transport", transport)
        .containsEntry("procedure", "echo")
        .containsEntry("encoding", "raw")
        .containsEntry("routingKey", "")
        .containsEntry("routingDelegate", "")
        .containsEntry("direction", "inbound")
        .containsEntry("rpcType", "Unary")
        .containsEntry("successful", true)
        .containsKeys("latency", "timeout")
        .doesNotContainKeys("error", "errorCode");
    assertThat((String) echo.field("latency")).matches("[0-9.]+(ns|µs|ms|s)");

    Line bad = single(serverLog, "bad");
    assertThat(bad.level()).isEqualTo(Level.WARN); // a caller failure, inbound
    assertThat(bad.message()).isEqualTo("Error handling inbound request.");
    assertThat(bad.fields())
        .containsEntry("successful", false)
        .containsEntry("errorCode", "invalid-argument")
        .containsEntry("error", "bad request body");
    assertThat(single(serverLog, "broken").level()).isEqualTo(Level.ERROR);
    assertThat(single(serverLog, "broken").fields()).containsEntry("errorCode", "internal");
    assertThat(single(serverLog, "slow").level()).isEqualTo(Level.ERROR);
    assertThat(single(serverLog, "slow").fields()).containsEntry("errorCode", "deadline-exceeded");
    assertThat(serverLog.linesFor("nope")).isEmpty(); // refused by the router, before middleware

    Line clientEcho = single(clientLog, "echo");
    assertThat(clientEcho.level()).isEqualTo(Level.DEBUG);
    assertThat(clientEcho.message()).isEqualTo("Made outbound call.");
    assertThat(clientEcho.fields()).containsEntry("direction", "outbound");
    Line clientBad = single(clientLog, "bad");
    assertThat(clientBad.level()).isEqualTo(Level.ERROR); // a caller failure, outbound: ERROR
    assertThat(clientBad.message()).isEqualTo("Error making outbound call.");
    assertThat(clientBad.fields()).containsEntry("errorCode", "invalid-argument");
    assertThat(single(clientLog, "broken").level()).isEqualTo(Level.ERROR);
    assertThat(single(clientLog, "slow").fields()).containsEntry("errorCode", "deadline-exceeded");
    Line nope = single(clientLog, "nope");
    assertThat(nope.level()).isEqualTo(Level.ERROR);
    assertThat(nope.fields())
        .containsEntry(
            "errorCode", transport.equals("tchannel") ? "invalid-argument" : "unimplemented");

    if (transport.equals("grpc")) {
      for (CapturingLogger log : List.of(serverLog, clientLog)) {
        Line s = single(log, "stream-echo");
        assertThat(s.level()).isEqualTo(Level.DEBUG);
        assertThat(s.message()).isEqualTo("Successfully closed stream");
        assertThat(s.fields())
            .containsEntry("rpcType", "Streaming")
            .containsEntry("messagesSent", 2)
            .containsEntry("messagesReceived", 2)
            .containsKey("duration");
      }
    }
    for (CapturingLogger log : List.of(serverLog, clientLog)) {
      assertThat(log.lines())
          .allSatisfy(l -> assertThat(l.fields().values()).doesNotContain(SECRET, "hello"));
    }
  }

  /**
   * Overrides: {@code level} sets both directions, a direction's own setting wins whatever the order,
   * {@code null} turns lines off, and a level the logger has disabled writes nothing.
   */
  @Test
  void levelsOverride() throws Exception {
    CapturingLogger serverLog = new CapturingLogger("server", Level.TRACE);
    CapturingLogger clientLog = new CapturingLogger("client", Level.INFO);
    try (Loopback lo =
        Loopback.start(
            "in-memory",
            b ->
                YarpcCallLogs.builder()
                    .logger(serverLog)
                    .inboundLevel(CallOutcome.CALLER_FAILURE, null) // before level(): still wins
                    .level(CallOutcome.CALLER_FAILURE, Level.INFO)
                    .level(CallOutcome.SUCCESS, Level.INFO)
                    .build()
                    .install(b),
            b ->
                YarpcCallLogs.builder()
                    .logger(clientLog)
                    .level(CallOutcome.CALLER_FAILURE, Level.INFO)
                    .outboundLevel(CallOutcome.SERVER_FAILURE, Level.WARN)
                    .build()
                    .install(b))) {
      RawClient raw = RawClient.of(lo.client.clientConfig(Loopback.SERVER));
      raw.call("echo", HELLO, OPTIONS).get(10, TimeUnit.SECONDS);
      raw.call("bad", HELLO, OPTIONS).handle((v, e) -> null).get();
      raw.call("fail", new byte[] {(byte) Code.UNAVAILABLE.value()}, OPTIONS)
          .handle((v, e) -> null)
          .get();
      lo.close();
      lo.assertNoLeaks();
    }
    assertThat(single(serverLog, "echo").level()).isEqualTo(Level.INFO);
    assertThat(serverLog.linesFor("bad")).isEmpty(); // off inbound, though level() came later
    assertThat(single(serverLog, "fail").level()).isEqualTo(Level.ERROR); // the default
    assertThat(clientLog.linesFor("echo")).isEmpty(); // DEBUG (the default): disabled in the logger
    assertThat(single(clientLog, "bad").level()).isEqualTo(Level.INFO); // level(): both directions
    assertThat(single(clientLog, "fail").level()).isEqualTo(Level.WARN);
  }

  private static Line single(CapturingLogger log, String procedure) {
    List<Line> lines = log.linesFor(procedure);
    assertThat(lines).as("lines for %s: %s", procedure, log.lines()).hasSize(1);
    return lines.get(0);
  }

  private static void stream(Loopback lo) throws Exception {
    RequestMeta meta = RequestMeta.builder().procedure("stream-echo").encoding("raw").build();
    ClientStream stream =
        lo.client.clientConfig(Loopback.SERVER).callStream(meta).get(10, TimeUnit.SECONDS);
    for (int i = 0; i < 2; i++) {
      stream.send(StreamMessage.of(Body.of(HELLO))).get(10, TimeUnit.SECONDS);
    }
    stream.halfClose();
    for (int i = 0; i < 2; i++) {
      stream.receive().get(10, TimeUnit.SECONDS).release();
    }
    assertThat(stream.receive().get(10, TimeUnit.SECONDS)).isNull();
  }
}
