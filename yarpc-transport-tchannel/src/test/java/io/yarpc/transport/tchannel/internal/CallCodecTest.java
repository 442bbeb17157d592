package io.yarpc.transport.tchannel.internal;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.yarpc.errors.ApplicationErrorMeta;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Headers;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.tchannel.ChecksumType;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The YARPC mapping of docs/spec/wire-tchannel.md §12 on both sides, without sockets. */
class CallCodecTest {
  private static final RequestMeta META =
      RequestMeta.builder()
          .caller("caller")
          .service("svc")
          .procedure("proc")
          .encoding("raw")
          .shardKey("sk1")
          .routingKey("rk1")
          .routingDelegate("rd1")
          .callerProcedure("cp")
          .headers(Headers.of("X-Mixed", "Value", "$tracing$uber-trace-id", "t"))
          .propagationHeaders(Headers.of("uber-trace-id", "t2", "traceparent", "tp"))
          .deadline(Deadline.after(Duration.ofSeconds(5)))
          .build();

  @Test
  void requestRoundTrip() throws Exception {
    List<ByteBuf> frames =
        CallCodec.encodeRequest(
            PooledByteBufAllocator.DEFAULT,
            9,
            META,
            Body.of("body".getBytes(UTF_8)),
            1234,
            new byte[25],
            ChecksumType.CRC32,
            Frames.MAX_FRAME_SIZE);
    try {
      CallFrame f = CallFrame.parse(frames.get(0));
      assertThat(f.service()).isEqualTo("svc");
      assertThat(f.ttl()).isEqualTo(1234);
      assertThat(f.headers())
          .containsExactly(
              Map.entry("as", "raw"),
              Map.entry("cn", "caller"),
              Map.entry("sk", "sk1"),
              Map.entry("rk", "rk1"),
              Map.entry("rd", "rd1"));
      MessageAssembler a = new MessageAssembler(true, f.checksumType(), 1 << 20);
      assertThat(a.add(f)).isTrue();
      Map<String, String> arg2 = ApplicationHeaders.decodeBinary(a.argBytes(1));
      assertThat(arg2)
          .containsEntry("x-mixed", "Value")
          .containsEntry("$rpc$-caller-procedure", "cp")
          // propagation headers as $tracing$ keys, winning over an application header of that name
          .containsEntry("$tracing$uber-trace-id", "t2")
          .containsEntry("$tracing$traceparent", "tp");
      RequestMeta server =
          CallCodec.decodeRequestMeta(
              f.service(), f.headers(), f.ttl(), a.argBytes(0), a.argBytes(1));
      a.release();
      assertThat(server.caller()).isEqualTo("caller");
      assertThat(server.procedure()).isEqualTo("proc");
      assertThat(server.encoding()).isEqualTo("raw");
      assertThat(server.transport()).isEqualTo("tchannel");
      assertThat(server.shardKey()).isEqualTo("sk1");
      assertThat(server.routingKey()).isEqualTo("rk1");
      assertThat(server.routingDelegate()).isEqualTo("rd1");
      assertThat(server.callerProcedure()).isEqualTo("cp");
      assertThat(server.headers().asMap()).containsExactly(Map.entry("x-mixed", "Value"));
      assertThat(server.propagationHeaders().asMap())
          .containsExactly(Map.entry("uber-trace-id", "t2"), Map.entry("traceparent", "tp"));
      assertThat(server.deadline().remainingMillis()).isPositive().isLessThanOrEqualTo(1234);
    } finally {
      frames.forEach(ByteBuf::release);
    }
  }

  @Test
  void jsonSchemeCarriesHeadersAsAJsonObject() throws Exception {
    RequestMeta meta =
        META.toBuilder().encoding("json").callerProcedure("").headers(Headers.of("k", "v")).build();
    List<ByteBuf> frames =
        CallCodec.encodeRequest(
            PooledByteBufAllocator.DEFAULT,
            9,
            meta,
            Body.empty(),
            10,
            new byte[25],
            ChecksumType.NONE,
            Frames.MAX_FRAME_SIZE);
    try {
      MessageAssembler a = new MessageAssembler(true, ChecksumType.NONE, 1 << 20);
      a.add(CallFrame.parse(frames.get(0)));
      // the propagation headers too, as $tracing$ keys of the same object (as yarpc-go merges them)
      assertThat(new String(a.argBytes(1), UTF_8))
          .isEqualTo(
              "{\"k\":\"v\",\"$tracing$uber-trace-id\":\"t2\",\"$tracing$traceparent\":\"tp\"}");
      a.release();
    } finally {
      frames.forEach(ByteBuf::release);
    }
  }

  @Test
  void oversizedTransportValuesAreRefused() {
    RequestMeta meta = META.toBuilder().shardKey("s".repeat(256)).build();
    YarpcException e =
        catchThrowableOfType(
            () ->
                CallCodec.encodeRequest(
                    PooledByteBufAllocator.DEFAULT,
                    1,
                    meta,
                    Body.empty(),
                    10,
                    new byte[25],
                    ChecksumType.NONE,
                    Frames.MAX_FRAME_SIZE),
            YarpcException.class);
    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
  }

  @Test
  void responseHeadersForAnApplicationError() {
    Response r =
        Response.builder()
            .headers(Headers.of("Echo", "x"))
            .applicationError(
                new ApplicationErrorMeta(Code.FAILED_PRECONDITION, "Oops", "d".repeat(300)))
            .build();
    Map<String, String> h =
        CallCodec.responseHeaders(
            "svc", r, YarpcException.of(Code.NOT_FOUND, "missing").withName("NotThere"));
    assertThat(h)
        .containsEntry("echo", "x")
        .containsEntry("$rpc$-service", "svc")
        .containsEntry("$rpc$-error-code", "not-found")
        .containsEntry("$rpc$-error-name", "NotThere")
        .containsEntry("$rpc$-error-message", "missing")
        .containsEntry("$rpc$-application-error-code", "9")
        .containsEntry("$rpc$-application-error-name", "Oops")
        // 256 bytes in all, as yarpc-go cuts them
        .containsEntry("$rpc$-application-error-details", "d".repeat(244) + " (truncated)");
  }

  @Test
  void handlersCannotSetReservedKeys() {
    Response r = Response.builder().headers(Headers.of("$rpc$-service", "evil")).build();
    YarpcException e =
        catchThrowableOfType(() -> CallCodec.responseHeaders("svc", r, null), YarpcException.class);
    assertThat(e.code()).isEqualTo(Code.INTERNAL);
  }

  private static byte[] arg2(String... kv) {
    Map<String, String> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put(kv[i], kv[i + 1]);
    }
    return ApplicationHeaders.encodeBinary(m);
  }

  @Test
  void clientReadsAResponse() {
    Response r =
        CallCodec.decodeResponse(META, 0, arg2("$rpc$-service", "svc", "Out", "1"), Body.empty());
    assertThat(r.isApplicationError()).isFalse();
    assertThat(r.headers().asMap()).containsExactly(Map.entry("out", "1"));
  }

  @Test
  void clientReadsApplicationErrorMeta() {
    Response r =
        CallCodec.decodeResponse(
            META,
            1,
            arg2(
                "$rpc$-application-error-code",
                "9",
                "$rpc$-application-error-name",
                "N",
                "$rpc$-application-error-details",
                "D"),
            Body.empty());
    assertThat(r.isApplicationError()).isTrue();
    assertThat(r.applicationErrorMeta())
        .isEqualTo(new ApplicationErrorMeta(Code.FAILED_PRECONDITION, "N", "D"));
    assertThat(r.headers().isEmpty()).isTrue();
  }

  @Test
  void clientTurnsTheErrorKeysIntoAnExceptionCarryingTheResponse() {
    Body body = Body.of("b".getBytes(UTF_8));
    YarpcException e =
        catchThrowableOfType(
            () ->
                CallCodec.decodeResponse(
                    META,
                    1,
                    arg2(
                        "$RPC$-Error-Code",
                        "aborted",
                        "$rpc$-error-message",
                        "m",
                        "$rpc$-error-name",
                        "n",
                        "h",
                        "v"),
                    body),
            YarpcException.class);
    assertThat(e.code()).isEqualTo(Code.ABORTED);
    assertThat(e.getMessage()).isEqualTo("m");
    assertThat(e.name()).isEqualTo("n");
    assertThat(e.response().isApplicationError()).isTrue();
    assertThat(e.response().headers().asMap()).containsExactly(Map.entry("h", "v"));
    assertThat(e.response().body()).isSameAs(body);
    body.release();
  }

  @Test
  void okAsAnErrorCodeIsInternal() {
    YarpcException e =
        catchThrowableOfType(
            () -> CallCodec.decodeResponse(META, 1, arg2("$rpc$-error-code", "ok"), Body.empty()),
            YarpcException.class);
    assertThat(e.code()).isEqualTo(Code.INTERNAL);
    assertThat(e.getMessage()).isEqualTo("got CodeOK from error header");
    e.response().body().release();
  }

  @Test
  void serviceMismatchIsInternalAndReleasesTheBody() {
    Body body = Body.of(new byte[] {1});
    YarpcException e =
        catchThrowableOfType(
            () -> CallCodec.decodeResponse(META, 0, arg2("$rpc$-service", "other"), body),
            YarpcException.class);
    assertThat(e.code()).isEqualTo(Code.INTERNAL);
    assertThat(e.getMessage())
        .isEqualTo(
            "service name sent from the request does not match the service name "
                + "received in the response, sent \"svc\", got: \"other\"");
    assertThat(body.isReleased()).isTrue();
  }
}
