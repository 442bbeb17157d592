package io.yarpc.transport.tchannel;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.yarpc.Call;
import io.yarpc.Dispatcher;
import io.yarpc.encoding.json.Json;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Response;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A tchannel-node 4.0.1 client calls a YARPC dispatcher served by the TChannel inbound: raw and JSON arg
 * schemes with application headers, application errors, system errors as error frames, arg3 spanning
 * several frames, and the three checksum types node sends.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NodeClientInteropTest {
  private static final String SERVICE = "java-svc";
  private static final Duration WAIT = Duration.ofSeconds(15);

  private static Dispatcher server;
  private static NodePeer node;

  /** A JSON payload. */
  public static final class Payload {
    public String text;
    public long number;
  }

  @BeforeAll
  static void start() throws Exception {
    if (!NodePeer.isInstalled()) {
      return; // every test is skipped by assumeNode()
    }
    TChannelTransport transport = TChannelTransport.of(SERVICE);
    TChannelInbound inbound = transport.inbound();
    server = Dispatcher.builder(SERVICE).inbound(inbound).build();
    server.register(
        Raw.procedure(
            "echo",
            body -> {
              echoHeaders();
              return body;
            }),
        Json.procedure(
            "json-echo",
            Payload.class,
            p -> {
              echoHeaders();
              p.number++;
              return p;
            }),
        Raw.procedure(
            "throw",
            body -> {
              throw new IllegalStateException("handler blew up");
            }),
        Raw.procedure(
            "not-found",
            body -> {
              throw YarpcException.of(Code.NOT_FOUND, "no such thing").withName("Missing");
            }),
        Procedure.builder("system-error")
            .unary(
                request -> {
                  Code code = Code.fromWireName(new String(request.body().toByteArray(), UTF_8));
                  return CompletableFuture.failedFuture(
                      YarpcException.of(code, "deliberate " + code.wireName()));
                })
            .build(),
        Procedure.builder("inspect")
            .unary(
                request -> {
                  Body in = request.body();
                  boolean heap = true;
                  CRC32 crc = new CRC32();
                  int buffers = 0;
                  for (ByteBuffer b : in.byteBuffers()) {
                    heap &= b.hasArray();
                    crc.update(b);
                    buffers++;
                  }
                  String seen =
                      "byteAccess="
                          + in.hasByteAccess()
                          + " heap="
                          + heap
                          + " buffers="
                          + buffers
                          + " length="
                          + in.length()
                          + " crc="
                          + Long.toHexString(crc.getValue());
                  return CompletableFuture.completedFuture(
                      Response.of(Body.of(seen.getBytes(UTF_8))));
                })
            .build());
    server.start();
    node = NodePeer.start("client.js", inbound.hostPort());
  }

  @BeforeEach
  void assumeNode() {
    NodePeer.assumeInstalled();
  }

  @AfterAll
  static void stop() {
    if (node != null) {
      node.close();
    }
    if (server != null) {
      server.stop();
    }
  }

  private static void echoHeaders() {
    Call call = Call.current();
    call.meta().headers().forEach(call::setResponseHeader);
  }

  private static JsonObject call(
      String endpoint, String as, Map<String, String> headers, String body, int checksumType)
      throws Exception {
    JsonObject cmd = new JsonObject();
    cmd.addProperty("service", SERVICE);
    cmd.addProperty("endpoint", endpoint);
    cmd.addProperty("as", as);
    JsonObject h = new JsonObject();
    headers.forEach(h::addProperty);
    cmd.add("headers", h);
    cmd.addProperty("body", body);
    cmd.addProperty("checksumType", checksumType);
    cmd.addProperty("timeout", 5000);
    return node.send(cmd).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
  }

  private static String arg3(JsonObject answer) {
    return new String(Base64.getDecoder().decode(answer.get("arg3Base64").getAsString()), UTF_8);
  }

  private static JsonObject headers(JsonObject answer) {
    return answer.getAsJsonObject("headers");
  }

  @ParameterizedTest(name = "checksum type {0}")
  @ValueSource(ints = {0, 1, 3})
  void rawEchoWithHeaders(int checksumType) throws Exception {
    JsonObject a =
        call(
            "echo",
            "raw",
            Map.of("Trace-Me", "MiXeD", "empty", ""),
            "hello from node",
            checksumType);
    assertThat(a.has("error")).as("error: %s", a.get("error")).isFalse();
    assertThat(a.get("ok").getAsBoolean()).isTrue();
    assertThat(arg3(a)).isEqualTo("hello from node");
    assertThat(headers(a).get("trace-me").getAsString()).isEqualTo("MiXeD");
    assertThat(headers(a).get("empty").getAsString()).isEmpty();
    assertThat(headers(a).get("$rpc$-service").getAsString()).isEqualTo(SERVICE);
    assertThat(a.getAsJsonObject("resHeaders").get("as").getAsString()).isEqualTo("raw");
    assertThat(a.get("checksumType").getAsInt())
        .as("response checksum type")
        .isEqualTo(checksumType);
  }

  @Test
  void jsonEchoWithHeaders() throws Exception {
    JsonObject a =
        call("json-echo", "json", Map.of("k", "v"), "{\"text\":\"hi\",\"number\":41}", 3);
    assertThat(a.has("error")).as("error: %s", a.get("error")).isFalse();
    assertThat(a.get("ok").getAsBoolean()).isTrue();
    JsonObject body = JsonParser.parseString(arg3(a)).getAsJsonObject();
    assertThat(body.get("text").getAsString()).isEqualTo("hi");
    assertThat(body.get("number").getAsLong()).isEqualTo(42);
    assertThat(headers(a).get("k").getAsString()).isEqualTo("v");
    assertThat(headers(a).get("$rpc$-service").getAsString()).isEqualTo(SERVICE);
    assertThat(a.getAsJsonObject("resHeaders").get("as").getAsString()).isEqualTo("json");
  }

  @Test
  void throwingHandlerIsAnApplicationError() throws Exception {
    JsonObject a = call("throw", "raw", Map.of(), "x", 3);
    assertThat(a.has("error")).as("error: %s", a.get("error")).isFalse();
    assertThat(a.get("ok").getAsBoolean()).as("ok (code byte 0x00)").isFalse();
    assertThat(headers(a).get("$rpc$-error-code").getAsString()).isEqualTo("unknown");
    assertThat(headers(a).get("$rpc$-error-message").getAsString())
        .isEqualTo(
            "error for service \"java-svc\" and procedure \"throw\": unexpected error (the server logged it)");
    // no Java class name on the wire
    assertThat(headers(a).has("$rpc$-application-error-name")).isFalse();
  }

  @Test
  void yarpcErrorFromHandlerKeepsItsCodeAndName() throws Exception {
    JsonObject a = call("not-found", "raw", Map.of(), "x", 1);
    assertThat(a.get("ok").getAsBoolean()).isFalse();
    assertThat(headers(a).get("$rpc$-error-code").getAsString()).isEqualTo("not-found");
    assertThat(headers(a).get("$rpc$-error-name").getAsString()).isEqualTo("Missing");
    assertThat(headers(a).get("$rpc$-error-message").getAsString()).isEqualTo("no such thing");
    assertThat(headers(a).get("$rpc$-application-error-code").getAsString()).isEqualTo("5");
  }

  @Test
  void unknownProcedureIsABadRequestErrorFrame() throws Exception {
    JsonObject a = call("nope", "raw", Map.of(), "x", 3);
    JsonObject error = a.getAsJsonObject("error");
    assertThat(error).as("answer %s", a).isNotNull();
    assertThat(error.get("isErrorFrame").getAsBoolean()).isTrue();
    assertThat(error.get("codeName").getAsString()).isEqualTo("BadRequest");
    assertThat(error.get("message").getAsString())
        .isEqualTo("unrecognized procedure \"nope\" for service \"java-svc\"");
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource({
    "cancelled, Cancelled",
    "unknown, UnexpectedError",
    "invalid-argument, BadRequest",
    "deadline-exceeded, Timeout",
    "not-found, UnexpectedError",
    "resource-exhausted, Busy",
    "unimplemented, BadRequest",
    "internal, UnexpectedError",
    "unavailable, Declined",
    "permission-denied, UnexpectedError",
  })
  void systemErrorsAreErrorFrames(String code, String codeName) throws Exception {
    JsonObject a = call("system-error", "raw", Map.of(), code, 3);
    JsonObject error = a.getAsJsonObject("error");
    assertThat(error).as("answer %s", a).isNotNull();
    assertThat(error.get("isErrorFrame").getAsBoolean()).isTrue();
    assertThat(error.get("codeName").getAsString()).isEqualTo(codeName);
    assertThat(error.get("message").getAsString()).isEqualTo("deliberate " + code);
  }

  /** 300 KiB of arg3 spans several frames both ways; the handler sees heap byte access over them. */
  @ParameterizedTest(name = "checksum type {0}")
  @ValueSource(ints = {0, 1, 3})
  void largeBodiesSpanFrames(int checksumType) throws Exception {
    int size = 300 * 1024;
    JsonObject cmd = new JsonObject();
    cmd.addProperty("service", SERVICE);
    cmd.addProperty("endpoint", "echo");
    cmd.addProperty("as", "raw");
    JsonObject repeat = new JsonObject();
    repeat.addProperty("size", size);
    cmd.add("bodyRepeat", repeat);
    cmd.addProperty("checksumType", checksumType);
    JsonObject a = node.send(cmd).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    assertThat(a.has("error")).as("error: %s", a.get("error")).isFalse();
    byte[] echoed = Base64.getDecoder().decode(a.get("arg3Base64").getAsString());
    assertThat(echoed).hasSize(size);
    for (int i = 0; i < size; i++) {
      if (echoed[i] != (byte) (i * 13)) {
        throw new AssertionError("byte " + i + " differs");
      }
    }
    assertThat(a.get("checksumType").getAsInt()).isEqualTo(checksumType);

    cmd.addProperty("endpoint", "inspect");
    JsonObject inspected = node.send(cmd).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    CRC32 crc = new CRC32();
    crc.update(echoed);
    assertThat(arg3(inspected))
        .startsWith("byteAccess=true heap=true buffers=")
        .endsWith(" length=" + size + " crc=" + Long.toHexString(crc.getValue()));
    int buffers = Integer.parseInt(arg3(inspected).replaceAll(".*buffers=(\\d+).*", "$1"));
    assertThat(buffers).as("arg3 chunks composed without a copy").isGreaterThan(1);
  }
}
