package io.yarpc.encoding.json;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.TypeAdapter;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonWriter;
import io.yarpc.Call;
import io.yarpc.CallOptions;
import io.yarpc.Dispatcher;
import io.yarpc.Reply;
import io.yarpc.encoding.CountingBody;
import io.yarpc.encoding.TestOutbound;
import io.yarpc.errors.ApplicationErrorMeta;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.Handler;
import io.yarpc.transport.Headers;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.RpcType;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class JsonTest {
  static final class GetRequest {
    String key;

    GetRequest() {}

    GetRequest(String key) {
      this.key = key;
    }
  }

  static final class GetResponse {
    String key;
    String value;

    GetResponse() {}

    GetResponse(String key, String value) {
      this.key = key;
      this.value = value;
    }
  }

  /** A type the test Gson refuses to write. */
  static final class Unwritable {}

  private static final Gson REFUSING =
      new GsonBuilder()
          .registerTypeAdapter(
              Unwritable.class,
              new TypeAdapter<Unwritable>() {
                @Override
                public void write(JsonWriter out, Unwritable value) {
                  throw new IllegalStateException("cannot write this");
                }

                @Override
                public Unwritable read(JsonReader in) {
                  throw new IllegalStateException("cannot read this");
                }
              })
          .create();

  private static final RequestMeta META =
      RequestMeta.builder()
          .caller("caller")
          .service("svc")
          .procedure("get")
          .encoding("json")
          .build();

  private static final Procedure GET =
      Json.procedure(
          "get", GetRequest.class, req -> new GetResponse(req.key, "value-of-" + req.key));

  private Dispatcher dispatcher;

  @AfterEach
  void stop() {
    if (dispatcher != null) {
      dispatcher.stop();
    }
  }

  private static byte[] bytes(String s) {
    return s.getBytes(UTF_8);
  }

  private static String text(Body body) {
    return new String(body.toByteArray(), UTF_8);
  }

  private static CompletableFuture<Response> handle(Procedure p, Request request) {
    Handler<Request, Response> h = p.handlerSpec().unary();
    try {
      return new Call(request.meta()).run(() -> h.handle(request));
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  private static Throwable failure(CompletableFuture<?> f) {
    assertThatThrownBy(() -> f.get(5, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class);
    return f.handle((v, e) -> e instanceof CompletionException ? e.getCause() : e).join();
  }

  private static YarpcException yarpcFailure(CompletableFuture<?> f) {
    Throwable t = failure(f);
    assertThat(t).isInstanceOf(YarpcException.class);
    return (YarpcException) t;
  }

  // ---- handlers driven directly ----

  @Test
  void procedureIsRegisteredWithTheJsonEncoding() {
    assertThat(GET.encoding()).isEqualTo("json");
    assertThat(GET.handlerSpec().type()).isEqualTo(RpcType.UNARY);
    Procedure oneway = Json.onewayProcedure("put", GetRequest.class, r -> {});
    assertThat(oneway.encoding()).isEqualTo("json");
    assertThat(oneway.handlerSpec().type()).isEqualTo(RpcType.ONEWAY);
  }

  @Test
  void decodesFromByteAccessAndAnswersWithATrailingNewline() throws Exception {
    CountingBody body = CountingBody.withByteAccess(bytes("{\"key\":\"k\"}"));
    Response r = handle(GET, Request.of(META, body)).get(5, TimeUnit.SECONDS);
    assertThat(text(r.body())).isEqualTo("{\"key\":\"k\",\"value\":\"value-of-k\"}\n");
    assertThat(r.body().length()).isEqualTo(r.body().toByteArray().length);
    assertThat(r.isApplicationError()).isFalse();
    assertThat(body.byteBuffersCalls.get()).isEqualTo(1);
    assertThat(body.openStreamCalls.get()).isZero();
    assertThat(body.streamReads.get()).isZero();
    assertThat(body.isReleased())
        .as("the invocation, not the encoding, releases the request body")
        .isFalse();
  }

  @Test
  void decodesMultiByteTextSplitAcrossDirectViews() throws Exception {
    String key = "h\u00e9llo \u20ac \uD83D\uDE00 w\u00f6rld";
    CountingBody body = CountingBody.withByteAccess(bytes("{\"key\":\"" + key + "\"}"), 7, true);
    Response r = handle(GET, Request.of(META, body)).get(5, TimeUnit.SECONDS);
    GetResponse decoded = new Gson().fromJson(text(r.body()), GetResponse.class);
    assertThat(decoded.key).isEqualTo(key);
    assertThat(body.byteBuffersCalls.get()).isEqualTo(1);
    assertThat(body.openStreamCalls.get()).isZero();
  }

  @Test
  void decodesFromTheStreamWithoutByteAccess() throws Exception {
    CountingBody body = CountingBody.streamOnly(bytes("{\"key\":\"k\"}"));
    Response r = handle(GET, Request.of(META, body)).get(5, TimeUnit.SECONDS);
    assertThat(text(r.body())).isEqualTo("{\"key\":\"k\",\"value\":\"value-of-k\"}\n");
    assertThat(body.byteBuffersCalls.get()).isZero();
    assertThat(body.openStreamCalls.get()).isEqualTo(1);
    assertThat(body.streamReads.get()).isPositive();
    assertThat(body.isReleased()).isFalse();
  }

  @Test
  void unknownFieldsAreIgnored() throws Exception {
    Response r =
        handle(
                GET,
                Request.of(
                    META,
                    Body.of(bytes("{\"extra\":{\"deep\":[1,2,3]},\"key\":\"k\",\"more\":true}"))))
            .get(5, TimeUnit.SECONDS);
    assertThat(text(r.body())).isEqualTo("{\"key\":\"k\",\"value\":\"value-of-k\"}\n");
  }

  @Test
  void emptyBodyIsAnEofDecodeError() {
    String expected =
        "failed to decode \"json\" request body for procedure \"get\" of service \"svc\" from "
            + "caller \"caller\": EOF";
    for (Body empty :
        new Body[] {
          Body.empty(), CountingBody.streamOnlyUnknownLength(new byte[0]), Body.of(bytes("  \n"))
        }) {
      YarpcException e = yarpcFailure(handle(GET, Request.of(META, empty)));
      assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
      assertThat(e.getMessage()).isEqualTo(expected);
      assertThat(e.response()).isNull();
    }
  }

  @Test
  void malformedJsonIsADecodeError() {
    for (String bad :
        new String[] {
          "{\"key\":", "{\"key\" \"k\"}", "{\"key\":\"k\"} trailing", "[1,2]", "{} {}", "\"str\""
        }) {
      YarpcException e = yarpcFailure(handle(GET, Request.of(META, Body.of(bytes(bad)))));
      assertThat(e.code()).as(bad).isEqualTo(Code.INVALID_ARGUMENT);
      assertThat(e.getMessage())
          .as(bad)
          .startsWith(
              "failed to decode \"json\" request body for procedure "
                  + "\"get\" of service \"svc\" from caller \"caller\": ");
      assertThat(e.getMessage())
          .doesNotContain("com.google.gson")
          .doesNotContain("JsonReader")
          .doesNotContain("https://")
          .doesNotContain("\n");
    }
    // a syntax error reads as one, without Gson's advice to a Java caller
    YarpcException syntax = yarpcFailure(handle(GET, Request.of(META, Body.of(bytes("x")))));
    assertThat(syntax.getMessage()).endsWith(": malformed JSON at line 1 column 1 path $");
    YarpcException trailing = yarpcFailure(handle(GET, Request.of(META, Body.of(bytes("{} {}")))));
    assertThat(trailing.getMessage()).endsWith(": JSON document was not fully consumed");
    YarpcException truncated =
        yarpcFailure(handle(GET, Request.of(META, Body.of(bytes("{\"key\":")))));
    assertThat(truncated.getMessage()).endsWith(": End of input at line 1 column 8 path $.key");
  }

  @Test
  void jsonNullReachesTheHandlerAsNull() throws Exception {
    Procedure p =
        Json.procedure("get", GetRequest.class, req -> req == null ? "was null" : "not null");
    Response r = handle(p, Request.of(META, Body.of(bytes("null\n")))).get(5, TimeUnit.SECONDS);
    assertThat(text(r.body())).isEqualTo("\"was null\"\n");
    Response nothing =
        handle(
                Json.procedure("get", GetRequest.class, req -> null),
                Request.of(META, Body.of(bytes("{}"))))
            .get(5, TimeUnit.SECONDS);
    assertThat(text(nothing.body())).isEqualTo("null\n");
  }

  @Test
  void mapsAndCustomGson() throws Exception {
    Gson gson = new GsonBuilder().serializeNulls().create();
    Procedure p =
        Json.procedure("get", Map.class, gson, m -> new GetResponse((String) m.get("key"), null));
    Response r =
        handle(p, Request.of(META, Body.of(bytes("{\"key\":\"k\"}")))).get(5, TimeUnit.SECONDS);
    assertThat(text(r.body())).isEqualTo("{\"key\":\"k\",\"value\":null}\n");
  }

  @Test
  void responseHeadersAreSent() throws Exception {
    Procedure p =
        Json.procedure(
            "get",
            GetRequest.class,
            req -> {
              Call.current().setResponseHeader("X-Echo", Call.current().header("x-in"));
              return req;
            });
    Response r =
        handle(
                p,
                Request.of(
                    META.toBuilder().headers(Headers.of("x-in", "v")).build(),
                    Body.of(bytes("{}"))))
            .get(5, TimeUnit.SECONDS);
    assertThat(r.headers().get("x-echo")).isEqualTo("v");
  }

  @Test
  void wrongEncodingGetsTheCanonicalMessage() {
    RequestMeta thrift = META.toBuilder().encoding("thrift").build();
    YarpcException e = yarpcFailure(handle(GET, Request.of(thrift, Body.of(bytes("{}")))));
    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(e.getMessage())
        .isEqualTo(
            "failed to decode \"json\" request body for procedure \"get\" of "
                + "service \"svc\" from caller \"caller\": expected encoding \"json\" but got \"thrift\"");
  }

  @Test
  void handlerRuntimeExceptionIsUnknownWithApplicationErrorFlag() {
    Procedure p =
        Json.procedure(
            "get",
            GetRequest.class,
            req -> {
              Call.current().setResponseHeader("x-partial", "1");
              throw new RuntimeException("boom");
            });
    YarpcException e = yarpcFailure(handle(p, Request.of(META, Body.of(bytes("{}")))));
    assertThat(e.code()).isEqualTo(Code.UNKNOWN);
    assertThat(e.getMessage()).isEqualTo("error for service \"svc\" and procedure \"get\": boom");
    assertThat(e.response().isApplicationError()).isTrue();
    assertThat(e.response().applicationErrorMeta())
        .isEqualTo(new ApplicationErrorMeta(null, null, null));
    assertThat(e.response().headers().get("x-partial")).isEqualTo("1");
    assertThat(e.response().body().length()).isZero();
  }

  @Test
  void handlerYarpcExceptionKeepsItsCode() {
    Procedure p =
        Json.procedure(
            "get",
            GetRequest.class,
            req -> {
              throw YarpcException.of(Code.NOT_FOUND, "no key %s", req.key);
            });
    YarpcException e = yarpcFailure(handle(p, Request.of(META, Body.of(bytes("{\"key\":\"k\"}")))));
    assertThat(e.code()).isEqualTo(Code.NOT_FOUND);
    assertThat(e.getMessage()).isEqualTo("no key k");
    assertThat(e.response().isApplicationError()).isTrue();
    assertThat(e.response().applicationErrorMeta().code()).isEqualTo(Code.NOT_FOUND);
  }

  @Test
  void checkedExceptionsAreHandlerErrorsToo() {
    Procedure p =
        Json.procedure(
            "get",
            GetRequest.class,
            req -> {
              throw new IOException("disk on fire");
            });
    YarpcException e = yarpcFailure(handle(p, Request.of(META, Body.of(bytes("{}")))));
    assertThat(e.getMessage())
        .isEqualTo("error for service \"svc\" and procedure \"get\": disk on fire");
    assertThat(e.response().applicationErrorMeta().name()).isNull();
  }

  @Test
  void unserialisableResponseIsAnEncodeError() {
    Procedure p = Json.procedure("get", GetRequest.class, REFUSING, req -> new Unwritable());
    YarpcException e = yarpcFailure(handle(p, Request.of(META, Body.of(bytes("{}")))));
    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(e.getMessage())
        .isEqualTo(
            "failed to encode \"json\" response body for procedure \"get\" of "
                + "service \"svc\" from caller \"caller\": cannot write this");
  }

  @Test
  void onewayHandler() throws Exception {
    CompletableFuture<GetRequest> seen = new CompletableFuture<>();
    Procedure p = Json.onewayProcedure("put", GetRequest.class, seen::complete);
    CountingBody body = CountingBody.withByteAccess(bytes("{\"key\":\"k\",\"unknown\":1}"));
    p.handlerSpec().oneway().handle(Request.of(META, body)).get(5, TimeUnit.SECONDS);
    assertThat(seen.get().key).isEqualTo("k");
    assertThat(body.openStreamCalls.get()).isZero();

    YarpcException empty =
        yarpcFailure(p.handlerSpec().oneway().handle(Request.of(META, Body.empty())));
    assertThat(empty.getMessage()).endsWith(": EOF");
    YarpcException wrong =
        yarpcFailure(
            p.handlerSpec()
                .oneway()
                .handle(
                    Request.of(META.toBuilder().encoding("raw").build(), Body.of(bytes("{}")))));
    assertThat(wrong.getMessage()).endsWith("expected encoding \"json\" but got \"raw\"");
  }

  // ---- end to end through a dispatcher ----

  private JsonClient loopbackClient(TestOutbound out, Procedure... procedures) {
    dispatcher = out.dispatcher("svc");
    dispatcher.register(procedures);
    return JsonClient.of(dispatcher.clientConfig("svc"));
  }

  @Test
  void roundTripWithHeaders() throws Exception {
    TestOutbound out = TestOutbound.loopback();
    JsonClient client =
        loopbackClient(
            out,
            Json.procedure(
                "get",
                GetRequest.class,
                req -> {
                  Call.current().setResponseHeader("x-in", Call.current().header("x-in"));
                  return new GetResponse(req.key, "v");
                }));
    CallOptions opts =
        CallOptions.builder().timeout(Duration.ofSeconds(5)).header("x-in", "hi").build();

    Reply<GetResponse> reply =
        client
            .callForReply("get", new GetRequest("k"), GetResponse.class, opts)
            .get(5, TimeUnit.SECONDS);
    assertThat(reply.value().key).isEqualTo("k");
    assertThat(reply.value().value).isEqualTo("v");
    assertThat(reply.headers().get("x-in")).isEqualTo("hi");
    assertThat(
            client
                .call("get", new GetRequest("z"), GetResponse.class, opts)
                .get(5, TimeUnit.SECONDS)
                .key)
        .isEqualTo("z");

    assertThat(out.clientResponseBodies).hasSize(2).allMatch(Body::isReleased);
    assertThat(out.serverRequestBodies).hasSize(2).allMatch(Body::isReleased);
  }

  @Test
  void clientIgnoresUnknownResponseFields() throws Exception {
    JsonClient client =
        loopbackClient(
            TestOutbound.loopback(),
            Json.procedure("get", GetRequest.class, req -> Map.of("key", req.key, "extra", 42)));
    GetResponse r =
        client
            .call("get", new GetRequest("k"), GetResponse.class, TestOutbound.OPTIONS)
            .get(5, TimeUnit.SECONDS);
    assertThat(r.key).isEqualTo("k");
    assertThat(r.value).isNull();
  }

  @Test
  void roundTripWithoutByteAccessReadsStreams() throws Exception {
    TestOutbound out = TestOutbound.loopback();
    out.streamBodies = true;
    JsonClient client = loopbackClient(out, GET);
    GetResponse r =
        client
            .call("get", new GetRequest("k"), GetResponse.class, TestOutbound.OPTIONS)
            .get(5, TimeUnit.SECONDS);
    assertThat(r.value).isEqualTo("value-of-k");
    for (Body b : new Body[] {out.serverRequestBodies.get(0), out.clientResponseBodies.get(0)}) {
      CountingBody counted = (CountingBody) b;
      assertThat(counted.openStreamCalls.get()).isEqualTo(1);
      assertThat(counted.streamReads.get()).isPositive();
      assertThat(counted.byteBuffersCalls.get()).isZero();
      assertThat(counted.isReleased()).isTrue();
    }
  }

  @Test
  void clientDecodesFromByteAccess() throws Exception {
    CountingBody body =
        CountingBody.withByteAccess(bytes("{\"key\":\"k\",\"value\":\"v\"}\n"), 2, false);
    JsonClient client =
        loopbackClient(
            TestOutbound.stub(
                request -> {
                  request.body().release();
                  return CompletableFuture.completedFuture(Response.of(body));
                }));
    GetResponse r =
        client
            .call("get", new GetRequest("k"), GetResponse.class, TestOutbound.OPTIONS)
            .get(5, TimeUnit.SECONDS);
    assertThat(r.value).isEqualTo("v");
    assertThat(body.byteBuffersCalls.get()).isEqualTo(1);
    assertThat(body.openStreamCalls.get()).isZero();
    assertThat(body.isReleased()).isTrue();
  }

  @Test
  void jsonProcedureCalledWithThriftIsRoutedAndRejected() {
    TestOutbound out = TestOutbound.loopback();
    loopbackClient(out, GET);
    RequestMeta thrift = TestOutbound.OPTIONS.toMeta("get", "thrift");
    YarpcException e =
        yarpcFailure(
            dispatcher
                .clientConfig("svc")
                .call(Request.of(thrift, Body.of(bytes("\u000b\u0000")))));
    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(e.getMessage())
        .isEqualTo(
            "failed to decode \"json\" request body for procedure \"get\" of "
                + "service \"svc\" from caller \"svc\": expected encoding \"json\" but got \"thrift\"");
  }

  @Test
  void emptyAndMalformedRequestsEndToEnd() {
    loopbackClient(TestOutbound.loopback(), GET);
    RequestMeta json = TestOutbound.OPTIONS.toMeta("get", "json");
    YarpcException empty =
        yarpcFailure(dispatcher.clientConfig("svc").call(Request.of(json, Body.empty())));
    assertThat(empty.getMessage())
        .isEqualTo(
            "failed to decode \"json\" request body for procedure "
                + "\"get\" of service \"svc\" from caller \"svc\": EOF");
    YarpcException bad =
        yarpcFailure(
            dispatcher.clientConfig("svc").call(Request.of(json, Body.of(bytes("{nope")))));
    assertThat(bad.code()).isEqualTo(Code.INVALID_ARGUMENT);
  }

  @Test
  void handlerErrorsReachTheClient() {
    TestOutbound out = TestOutbound.loopback();
    JsonClient client =
        loopbackClient(
            out,
            Json.procedure(
                "boom",
                GetRequest.class,
                req -> {
                  throw new RuntimeException("boom");
                }),
            Json.procedure(
                "missing",
                GetRequest.class,
                req -> {
                  throw YarpcException.of(Code.NOT_FOUND, "not here");
                }));
    YarpcException boom =
        yarpcFailure(
            client.call("boom", new GetRequest("k"), GetResponse.class, TestOutbound.OPTIONS));
    assertThat(boom.code()).isEqualTo(Code.UNKNOWN);
    assertThat(boom.getMessage())
        .isEqualTo(
            "error for service \"svc\" and procedure \"boom\": unexpected error (the server logged it)");
    assertThat(boom.response().applicationErrorMeta())
        .isEqualTo(new ApplicationErrorMeta(null, null, null));
    assertThat(boom.response().isApplicationError()).isTrue();

    YarpcException missing =
        yarpcFailure(
            client.call("missing", new GetRequest("k"), GetResponse.class, TestOutbound.OPTIONS));
    assertThat(missing.code()).isEqualTo(Code.NOT_FOUND);
    assertThat(missing.getMessage()).isEqualTo("not here");

    assertThat(out.clientResponseBodies).hasSize(2).allMatch(Body::isReleased);
  }

  @Test
  void applicationErrorResponseFailsTheCall() {
    CountingBody body = CountingBody.withByteAccess(bytes("{\"error\":\"details\"}"));
    JsonClient client =
        loopbackClient(
            TestOutbound.stub(
                request -> {
                  request.body().release();
                  return CompletableFuture.completedFuture(
                      Response.builder()
                          .body(body)
                          .applicationError(new ApplicationErrorMeta(null, "KeyError", null))
                          .build());
                }));
    YarpcException e =
        yarpcFailure(
            client.call("get", new GetRequest("k"), GetResponse.class, TestOutbound.OPTIONS));
    assertThat(e.code()).isEqualTo(Code.UNKNOWN);
    assertThat(e.name()).isEqualTo("KeyError");
    assertThat(e.getMessage()).isEqualTo("application error");
    assertThat(body.isReleased()).isTrue();
  }

  @Test
  void undecodableResponsesFailWithClientMessagesAndAreReleased() {
    for (String answer : new String[] {"", "<html>", "{\"key\":"}) {
      CountingBody body = CountingBody.withByteAccess(bytes(answer));
      JsonClient client =
          loopbackClient(
              TestOutbound.stub(
                  request -> {
                    request.body().release();
                    return CompletableFuture.completedFuture(Response.of(body));
                  }));
      YarpcException e =
          yarpcFailure(
              client.call("get", new GetRequest("k"), GetResponse.class, TestOutbound.OPTIONS));
      assertThat(e.code()).as(answer).isEqualTo(Code.INTERNAL);
      assertThat(e.getMessage())
          .as(answer)
          .startsWith(
              "failed to decode \"json\" response body for procedure \"get\" of service \"svc\": ");
      if (answer.isEmpty()) {
        assertThat(e.getMessage()).endsWith(": EOF");
      }
      assertThat(body.isReleased()).isTrue();
      dispatcher.stop();
    }
  }

  @Test
  void unserialisableRequestFailsBeforeSending() {
    TestOutbound stub =
        TestOutbound.stub(
            request -> {
              throw new AssertionError("must not be called");
            });
    dispatcher = stub.dispatcher("svc");
    JsonClient client = JsonClient.of(dispatcher.clientConfig("svc"), REFUSING);
    YarpcException e =
        yarpcFailure(client.call("get", new Unwritable(), GetResponse.class, TestOutbound.OPTIONS));
    assertThat(e.code()).isEqualTo(Code.INTERNAL);
    assertThat(e.getMessage())
        .isEqualTo(
            "failed to encode \"json\" request body for procedure \"get\" of service \"svc\": "
                + "cannot write this");
    assertThat(failure(client.callOneway("put", new Unwritable(), TestOutbound.OPTIONS)))
        .isInstanceOf(YarpcException.class);
  }

  @Test
  void oneway() throws Exception {
    CompletableFuture<GetRequest> seen = new CompletableFuture<>();
    JsonClient client =
        loopbackClient(
            TestOutbound.loopback(), Json.onewayProcedure("put", GetRequest.class, seen::complete));
    client.callOneway("put", new GetRequest("k"), TestOutbound.OPTIONS).get(5, TimeUnit.SECONDS);
    assertThat(seen.get(5, TimeUnit.SECONDS).key).isEqualTo("k");
  }
}
