package io.yarpc.transport.tchannel;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.yarpc.CallOptions;
import io.yarpc.ClientConfig;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.Reply;
import io.yarpc.encoding.json.JsonClient;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The TChannel outbound calls a tchannel-node 4.0.1 server: raw and JSON arg schemes with headers,
 * application errors (plain and with YARPC's error keys), every system error code as an error frame,
 * bodies spanning several frames in both directions, and the three checksum types (node verifies the
 * requests', this side the responses').
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NodeServerInteropTest {
  private static final String NODE_SERVICE = "node-svc";
  private static final String CALLER = "java-caller";
  private static final Duration WAIT = Duration.ofSeconds(15);

  private static NodePeer node;
  private static Dispatcher client;

  @BeforeAll
  static void start() throws Exception {
    if (!NodePeer.isInstalled()) {
      return; // every test is skipped by assumeNode()
    }
    node = NodePeer.start("server.js", NODE_SERVICE);
    String hostPort = node.readyArgument();
    TChannelTransport transport = TChannelTransport.of(CALLER);
    Dispatcher.Builder b = Dispatcher.builder(CALLER);
    for (ChecksumType type : List.of(ChecksumType.NONE, ChecksumType.CRC32, ChecksumType.CRC32C)) {
      b.outbound(
          key(type),
          Outbounds.builder()
              .serviceName(NODE_SERVICE)
              .unary(transport.singleOutboundBuilder(hostPort).checksumType(type).build())
              .build());
    }
    client = b.build();
    client.start();
  }

  @BeforeEach
  void assumeNode() {
    NodePeer.assumeInstalled();
  }

  @AfterAll
  static void stop() {
    if (client != null) {
      client.stop();
    }
    if (node != null) {
      node.close();
    }
  }

  private static String key(ChecksumType type) {
    return "node-" + type.name().toLowerCase();
  }

  private static ClientConfig config(ChecksumType type) {
    return client.clientConfig(key(type));
  }

  private static RawClient raw(ChecksumType type) {
    return RawClient.of(config(type));
  }

  private static CallOptions options() {
    return CallOptions.timeout(WAIT);
  }

  private static <T> T await(CompletableFuture<T> f) throws Exception {
    return f.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
  }

  private static YarpcException failure(CompletableFuture<?> f) {
    Throwable t = catchThrowable(() -> await(f));
    assertThat(t).isInstanceOf(ExecutionException.class);
    assertThat(t.getCause()).isInstanceOf(YarpcException.class);
    return (YarpcException) t.getCause();
  }

  @ParameterizedTest
  @EnumSource(value = ChecksumType.class, names = "FARMHASH", mode = EnumSource.Mode.EXCLUDE)
  void rawEchoWithHeaders(ChecksumType type) throws Exception {
    CallOptions opts =
        CallOptions.builder().timeout(WAIT).header("Echo-Key", "Value").header("empty", "").build();
    Reply<byte[]> reply = await(raw(type).callForReply("echo", "hello node".getBytes(UTF_8), opts));
    assertThat(new String(reply.value(), UTF_8)).isEqualTo("hello node");
    assertThat(reply.headers().get("echo-key")).isEqualTo("Value");
    assertThat(reply.headers().get("empty")).isEmpty();
  }

  /** A JSON payload. */
  public static final class Payload {
    public String text;
    public long number;
  }

  @Test
  void jsonEchoWithHeaders() throws Exception {
    Payload p = new Payload();
    p.text = "héllo";
    p.number = 7;
    CallOptions opts = CallOptions.builder().timeout(WAIT).header("k", "v").build();
    Reply<Payload> reply =
        await(
            JsonClient.of(config(ChecksumType.CRC32C))
                .callForReply("echo", p, Payload.class, opts));
    assertThat(reply.value().text).isEqualTo("héllo");
    assertThat(reply.value().number).isEqualTo(7);
    assertThat(reply.headers().get("k")).isEqualTo("v");
  }

  @Test
  void whatGoesOnTheWire() throws Exception {
    RequestMeta meta =
        RequestMeta.builder()
            .procedure("info")
            .encoding("raw")
            .shardKey("shard-1")
            .routingKey("rk-1")
            .routingDelegate("rd-1")
            .deadline(Deadline.after(WAIT))
            .build();
    Response r =
        await(config(ChecksumType.CRC32).call(Request.of(meta, Body.of(new byte[] {1, 2, 3}))));
    JsonObject info;
    try {
      info = JsonParser.parseString(new String(r.body().toByteArray(), UTF_8)).getAsJsonObject();
    } finally {
      r.body().release();
    }
    assertThat(info.get("service").getAsString()).isEqualTo(NODE_SERVICE);
    JsonObject h = info.getAsJsonObject("headers");
    assertThat(h.get("as").getAsString()).isEqualTo("raw");
    assertThat(h.get("cn").getAsString()).isEqualTo(CALLER);
    assertThat(h.get("sk").getAsString()).isEqualTo("shard-1");
    assertThat(h.get("rk").getAsString()).isEqualTo("rk-1");
    assertThat(h.get("rd").getAsString()).isEqualTo("rd-1");
    assertThat(info.get("checksumType").getAsInt()).isEqualTo(1);
    assertThat(info.get("ttl").getAsLong()).isPositive().isLessThanOrEqualTo(WAIT.toMillis());
    assertThat(info.get("arg2Length").getAsInt()).as("empty header map 00 00").isEqualTo(2);
    assertThat(info.get("arg3Length").getAsInt()).isEqualTo(3);
  }

  /** 70,000 and 300 KiB bodies span frames both ways; node verifies every request frame's checksum. */
  @ParameterizedTest(name = "{1} bytes, {0}")
  @CsvSource({
    "NONE, 70000",
    "CRC32, 70000",
    "CRC32C, 70000",
    "NONE, 307200",
    "CRC32, 307200",
    "CRC32C, 307200"
  })
  void fragmentedBodies(ChecksumType type, int size) throws Exception {
    byte[] body = new byte[size];
    new Random(size).nextBytes(body);
    assertThat(await(raw(type).call("echo", body, options()))).isEqualTo(body);
  }

  /** A body node generates arrives as byte access over several received frame buffers. */
  @ParameterizedTest
  @ValueSource(ints = {70000, 307200})
  void fragmentedResponseHasByteAccess(int size) throws Exception {
    RequestMeta meta =
        RequestMeta.builder()
            .procedure("big")
            .encoding("raw")
            .deadline(Deadline.after(WAIT))
            .build();
    Response r =
        await(
            config(ChecksumType.CRC32C)
                .call(Request.of(meta, Body.of(Integer.toString(size).getBytes(UTF_8)))));
    try {
      Body body = r.body();
      assertThat(body.hasByteAccess()).isTrue();
      assertThat(body.length()).isEqualTo(size);
      List<ByteBuffer> views = body.byteBuffers();
      assertThat(views).hasSizeGreaterThan(1).allSatisfy(v -> assertThat(v.hasArray()).isTrue());
      int i = 0;
      for (ByteBuffer v : views) {
        while (v.hasRemaining()) {
          assertThat(v.get()).as("byte %d", i).isEqualTo((byte) (i * 7));
          i++;
        }
      }
      assertThat(i).isEqualTo(size);
    } finally {
      r.body().release();
    }
    assertThat(r.body().isReleased()).isTrue();
  }

  @Test
  void applicationErrorWithoutYarpcKeys() throws Exception {
    RequestMeta meta =
        RequestMeta.builder()
            .procedure("fail")
            .encoding("raw")
            .deadline(Deadline.after(WAIT))
            .build();
    Response r =
        await(config(ChecksumType.CRC32C).call(Request.of(meta, Body.of("oops".getBytes(UTF_8)))));
    try {
      assertThat(r.isApplicationError()).isTrue();
      assertThat(new String(r.body().toByteArray(), UTF_8)).isEqualTo("oops");
    } finally {
      r.body().release();
    }
    YarpcException e =
        failure(raw(ChecksumType.CRC32C).call("fail", "oops".getBytes(UTF_8), options()));
    assertThat(e.code()).isEqualTo(Code.UNKNOWN);
    assertThat(e.getMessage()).isEqualTo("application error");
  }

  @Test
  void applicationErrorWithYarpcKeys() {
    YarpcException e =
        failure(
            raw(ChecksumType.CRC32)
                .call("yarpc-fail", "not-found:no such key".getBytes(UTF_8), options()));
    assertThat(e.code()).isEqualTo(Code.NOT_FOUND);
    assertThat(e.getMessage()).isEqualTo("no such key");
    assertThat(e.name()).isEqualTo("NodeError");
    assertThat(e.response()).isNotNull();
    assertThat(e.response().isApplicationError()).isTrue();
    assertThat(e.response().headers().get("from-node")).isEqualTo("yes");
    assertThat(e.response().headers().contains("$rpc$-error-code"))
        .as("reserved keys are removed")
        .isFalse();
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource({
    "Timeout, DEADLINE_EXCEEDED",
    "Cancelled, CANCELLED",
    "Busy, RESOURCE_EXHAUSTED",
    "Declined, UNAVAILABLE",
    "UnexpectedError, INTERNAL",
    "BadRequest, INVALID_ARGUMENT",
    "NetworkError, UNAVAILABLE",
    "Unhealthy, INTERNAL",
    "ProtocolError, INTERNAL",
  })
  void systemErrorFrames(String codeName, Code expected) {
    YarpcException e =
        failure(raw(ChecksumType.CRC32C).call("system-error", codeName.getBytes(UTF_8), options()));
    assertThat(e.code()).isEqualTo(expected);
    assertThat(e.getMessage()).contains("deliberate " + codeName + " from node");
  }

  /** After node's fatal error frame closed the connection, the peer reconnects for the next call. */
  @Test
  void reconnectsAfterAFatalErrorFrame() throws Exception {
    YarpcException e =
        failure(
            raw(ChecksumType.CRC32)
                .call("system-error", "ProtocolError".getBytes(UTF_8), options()));
    assertThat(e.code()).isEqualTo(Code.INTERNAL);
    assertThat(await(raw(ChecksumType.CRC32).call("echo", "again".getBytes(UTF_8), options())))
        .isEqualTo("again".getBytes(UTF_8));
  }
}
