package io.yarpc.encoding.raw;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.yarpc.Call;
import io.yarpc.CallOptions;
import io.yarpc.Dispatcher;
import io.yarpc.Reply;
import io.yarpc.encoding.CountingBody;
import io.yarpc.encoding.TestOutbound;
import io.yarpc.encoding.json.JsonClient;
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
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class RawTest {
  private static final RequestMeta META =
      RequestMeta.builder()
          .caller("caller")
          .service("svc")
          .procedure("echo")
          .encoding("raw")
          .build();

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

  private static Response handle(Procedure p, Request request) throws Exception {
    Handler<Request, Response> h = p.handlerSpec().unary();
    return new Call(request.meta()).run(() -> h.handle(request)).get(5, TimeUnit.SECONDS);
  }

  private static Throwable failure(CompletableFuture<?> f) {
    assertThatThrownBy(() -> f.get(5, TimeUnit.SECONDS))
        .isInstanceOf(java.util.concurrent.ExecutionException.class);
    return f.handle((v, e) -> e instanceof CompletionException ? e.getCause() : e).join();
  }

  // ---- handlers driven directly ----

  @Test
  void procedureIsAWildcard() {
    Procedure p = Raw.procedure("echo", b -> b);
    assertThat(p.name()).isEqualTo("echo");
    assertThat(p.encoding()).isEmpty();
    Procedure oneway = Raw.onewayProcedure("fire", b -> {});
    assertThat(oneway.encoding()).isEmpty();
    assertThat(oneway.handlerSpec().type()).isEqualTo(io.yarpc.transport.RpcType.ONEWAY);
  }

  @Test
  void decodesFromByteAccessWithoutOpeningAStream() throws Exception {
    CountingBody body = CountingBody.withByteAccess(bytes("hello"));
    byte[][] seen = new byte[1][];
    Response r =
        handle(
            Raw.procedure(
                "echo",
                b -> {
                  seen[0] = b;
                  return b;
                }),
            Request.of(META, body));
    assertThat(seen[0]).isEqualTo(bytes("hello"));
    assertThat(body.byteBuffersCalls.get()).isEqualTo(1);
    assertThat(body.openStreamCalls.get()).isZero();
    assertThat(body.streamReads.get()).isZero();
    assertThat(r.body().toByteArray()).isEqualTo(bytes("hello"));
    assertThat(r.isApplicationError()).isFalse();
    assertThat(body.isReleased())
        .as("the invocation, not the encoding, releases the request body")
        .isFalse();
  }

  @Test
  void decodesSeveralDirectViews() throws Exception {
    CountingBody body = CountingBody.withByteAccess(bytes("hello, world"), 3, true);
    Response r = handle(Raw.procedure("echo", b -> b), Request.of(META, body));
    assertThat(r.body().toByteArray()).isEqualTo(bytes("hello, world"));
    assertThat(body.byteBuffersCalls.get()).isEqualTo(1);
    assertThat(body.openStreamCalls.get()).isZero();
  }

  @Test
  void decodesFromTheStreamWithoutByteAccess() throws Exception {
    CountingBody body = CountingBody.streamOnly(bytes("hello"));
    Response r = handle(Raw.procedure("echo", b -> b), Request.of(META, body));
    assertThat(r.body().toByteArray()).isEqualTo(bytes("hello"));
    assertThat(body.byteBuffersCalls.get()).isZero();
    assertThat(body.openStreamCalls.get()).isEqualTo(1);
    assertThat(body.streamReads.get()).isPositive();
    assertThat(body.isReleased()).isFalse();
  }

  @Test
  void emptyBodyAndNullResult() throws Exception {
    byte[][] seen = new byte[1][];
    Response r =
        handle(
            Raw.procedure(
                "echo",
                b -> {
                  seen[0] = b;
                  return null;
                }),
            Request.of(META, Body.empty()));
    assertThat(seen[0]).isEmpty();
    assertThat(r.body().length()).isZero();
  }

  @Test
  void responseCarriesResponseHeaders() throws Exception {
    Response r =
        handle(
            Raw.procedure(
                "echo",
                b -> {
                  Call.current().setResponseHeader("X-Out", Call.current().header("x-in") + "!");
                  return b;
                }),
            Request.of(
                META.toBuilder().headers(Headers.of("x-in", "v")).build(), Body.of(bytes("x"))));
    assertThat(r.headers().get("x-out")).isEqualTo("v!");
  }

  @Test
  void rejectsOtherEncodings() {
    Procedure p = Raw.procedure("echo", b -> b);
    RequestMeta json = META.toBuilder().encoding("json").build();
    CompletableFuture<Response> f =
        p.handlerSpec().unary().handle(Request.of(json, Body.of(bytes("{}"))));
    assertThat(failure(f))
        .isInstanceOfSatisfying(
            YarpcException.class,
            e -> {
              assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
              assertThat(e.getMessage())
                  .isEqualTo(
                      "failed to decode \"raw\" request body for procedure \"echo\" of "
                          + "service \"svc\" from caller \"caller\": expected encoding \"raw\" but got \"json\"");
              assertThat(e.response()).isNull();
            });
  }

  @Test
  void handlerRuntimeExceptionBecomesUnknownWithApplicationErrorResponse() {
    Procedure p =
        Raw.procedure(
            "echo",
            b -> {
              Call.current().setResponseHeader("x-partial", "yes");
              throw new IllegalStateException("boom");
            });
    Request request = Request.of(META, Body.of(bytes("x")));
    CompletableFuture<Response> f = callWithCall(p.handlerSpec().unary(), request);
    assertThat(failure(f))
        .isInstanceOfSatisfying(
            YarpcException.class,
            e -> {
              assertThat(e.code()).isEqualTo(Code.UNKNOWN);
              assertThat(e.getMessage())
                  .isEqualTo("error for service \"svc\" and procedure \"echo\": boom");
              assertThat(e.getCause()).isInstanceOf(IllegalStateException.class);
              assertThat(e.response().isApplicationError()).isTrue();
              assertThat(e.response().applicationErrorMeta())
                  .isEqualTo(new ApplicationErrorMeta(null, null, null));
              assertThat(e.response().headers().get("x-partial")).isEqualTo("yes");
            });
  }

  private static CompletableFuture<Response> callWithCall(
      Handler<Request, Response> h, Request request) {
    try {
      return new Call(request.meta()).run(() -> h.handle(request));
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void handlerYarpcExceptionKeepsItsCode() {
    Procedure p =
        Raw.procedure(
            "echo",
            b -> {
              throw YarpcException.of(Code.NOT_FOUND, "no such thing");
            });
    CompletableFuture<Response> f =
        callWithCall(p.handlerSpec().unary(), Request.of(META, Body.empty()));
    assertThat(failure(f))
        .isInstanceOfSatisfying(
            YarpcException.class,
            e -> {
              assertThat(e.code()).isEqualTo(Code.NOT_FOUND);
              assertThat(e.getMessage()).isEqualTo("no such thing");
              assertThat(e.response().isApplicationError()).isTrue();
              assertThat(e.response().applicationErrorMeta().code()).isEqualTo(Code.NOT_FOUND);
            });
  }

  @Test
  void onewayHandlerDecodesAndChecksTheEncoding() throws Exception {
    CompletableFuture<byte[]> seen = new CompletableFuture<>();
    Procedure p = Raw.onewayProcedure("fire", seen::complete);
    CountingBody body = CountingBody.withByteAccess(bytes("ping"));
    p.handlerSpec().oneway().handle(Request.of(META, body)).get(5, TimeUnit.SECONDS);
    assertThat(seen.get()).isEqualTo(bytes("ping"));
    assertThat(body.openStreamCalls.get()).isZero();

    CompletableFuture<Void> wrong =
        p.handlerSpec()
            .oneway()
            .handle(Request.of(META.toBuilder().encoding("json").build(), Body.empty()));
    assertThat(failure(wrong))
        .isInstanceOfSatisfying(
            YarpcException.class, e -> assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT));

    CompletableFuture<Void> failing =
        Raw.onewayProcedure(
                "fire",
                b -> {
                  throw new RuntimeException("boom");
                })
            .handlerSpec()
            .oneway()
            .handle(Request.of(META, Body.empty()));
    assertThat(failure(failing))
        .isInstanceOfSatisfying(
            YarpcException.class,
            e ->
                assertThat(e.getMessage())
                    .isEqualTo("error for service \"svc\" and procedure \"echo\": boom"));
  }

  // ---- end to end through a dispatcher ----

  private RawClient loopbackClient(TestOutbound out, Procedure... procedures) {
    dispatcher = out.dispatcher("svc");
    dispatcher.register(procedures);
    return RawClient.of(dispatcher.clientConfig("svc"));
  }

  @Test
  void roundTripWithHeaders() throws Exception {
    TestOutbound out = TestOutbound.loopback();
    RawClient client =
        loopbackClient(
            out,
            Raw.procedure(
                "echo",
                b -> {
                  Call.current().setResponseHeader("x-caller", Call.current().meta().caller());
                  Call.current().setResponseHeader("x-in", Call.current().header("x-in"));
                  return new StringBuilder(new String(b, UTF_8))
                      .reverse()
                      .toString()
                      .getBytes(UTF_8);
                }));
    CallOptions opts =
        CallOptions.builder().timeout(Duration.ofSeconds(5)).header("x-in", "hi").build();

    Reply<byte[]> reply = client.callForReply("echo", bytes("abc"), opts).get(5, TimeUnit.SECONDS);
    assertThat(reply.value()).isEqualTo(bytes("cba"));
    assertThat(reply.headers().get("x-caller")).isEqualTo("svc");
    assertThat(reply.headers().get("x-in")).isEqualTo("hi");
    assertThat(client.call("echo", bytes("xy"), opts).get(5, TimeUnit.SECONDS))
        .isEqualTo(bytes("yx"));

    assertThat(out.clientResponseBodies).hasSize(2).allMatch(Body::isReleased);
    assertThat(out.serverRequestBodies).hasSize(2).allMatch(Body::isReleased);
  }

  @Test
  void roundTripWithoutByteAccessReadsStreams() throws Exception {
    TestOutbound out = TestOutbound.loopback();
    out.streamBodies = true;
    RawClient client = loopbackClient(out, Raw.procedure("echo", b -> b));
    assertThat(
            client.call("echo", bytes("stream me"), TestOutbound.OPTIONS).get(5, TimeUnit.SECONDS))
        .isEqualTo(bytes("stream me"));
    CountingBody request = (CountingBody) out.serverRequestBodies.get(0);
    CountingBody response = (CountingBody) out.clientResponseBodies.get(0);
    for (CountingBody b : new CountingBody[] {request, response}) {
      assertThat(b.openStreamCalls.get()).isEqualTo(1);
      assertThat(b.streamReads.get()).isPositive();
      assertThat(b.byteBuffersCalls.get()).isZero();
      assertThat(b.isReleased()).isTrue();
    }
  }

  @Test
  void handlerErrorReachesTheClientAndItsBodyIsReleased() {
    TestOutbound out = TestOutbound.loopback();
    RawClient client =
        loopbackClient(
            out,
            Raw.procedure(
                "fail",
                b -> {
                  Call.current().setResponseHeader("x-partial", "1");
                  throw new RuntimeException("boom");
                }));
    Throwable t = failure(client.call("fail", bytes("x"), TestOutbound.OPTIONS));
    assertThat(t)
        .isInstanceOfSatisfying(
            YarpcException.class,
            e -> {
              assertThat(e.code()).isEqualTo(Code.UNKNOWN);
              assertThat(e.getMessage())
                  .isEqualTo(
                      "error for service \"svc\" and procedure \"fail\": unexpected error (the server logged it)");
              assertThat(e.response().isApplicationError()).isTrue();
              assertThat(e.response().headers().get("x-partial")).isEqualTo("1");
              assertThat(e.response().body().length()).isZero();
            });
    assertThat(out.clientResponseBodies).hasSize(1).allMatch(Body::isReleased);
  }

  @Test
  void notFoundFromTheHandlerKeepsItsCode() {
    RawClient client =
        loopbackClient(
            TestOutbound.loopback(),
            Raw.procedure(
                "get",
                b -> {
                  throw YarpcException.of(Code.NOT_FOUND, "missing");
                }));
    assertThat(failure(client.call("get", bytes("k"), TestOutbound.OPTIONS)))
        .isInstanceOfSatisfying(
            YarpcException.class,
            e -> {
              assertThat(e.code()).isEqualTo(Code.NOT_FOUND);
              assertThat(e.getMessage()).isEqualTo("missing");
            });
  }

  @Test
  void rawProcedureCalledWithJson() {
    TestOutbound out = TestOutbound.loopback();
    loopbackClient(out, Raw.procedure("echo", b -> b));
    JsonClient json = JsonClient.of(dispatcher.clientConfig("svc"));
    assertThat(failure(json.call("echo", "x", String.class, TestOutbound.OPTIONS)))
        .isInstanceOfSatisfying(
            YarpcException.class,
            e -> {
              assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
              assertThat(e.getMessage())
                  .isEqualTo(
                      "failed to decode \"raw\" request body for procedure \"echo\" "
                          + "of service \"svc\" from caller \"svc\": expected encoding \"raw\" but got \"json\"");
            });
  }

  @Test
  void applicationErrorResponseWithoutTransportErrorFailsTheCall() {
    CountingBody body = CountingBody.withByteAccess(bytes("details in the body"));
    TestOutbound stub =
        TestOutbound.stub(
            request -> {
              request.body().release();
              return CompletableFuture.completedFuture(
                  Response.builder()
                      .body(body)
                      .headers(Headers.of("x-h", "v"))
                      .applicationError(
                          new ApplicationErrorMeta(Code.PERMISSION_DENIED, "Denied", "go away"))
                      .build());
            });
    RawClient client = loopbackClient(stub);
    assertThat(failure(client.call("p", bytes("x"), TestOutbound.OPTIONS)))
        .isInstanceOfSatisfying(
            YarpcException.class,
            e -> {
              assertThat(e.code()).isEqualTo(Code.PERMISSION_DENIED);
              assertThat(e.name()).isEqualTo("Denied");
              assertThat(e.getMessage()).isEqualTo("go away");
              assertThat(e.response().headers().get("x-h")).isEqualTo("v");
            });
    assertThat(body.isReleased()).isTrue();
    assertThat(body.byteBuffersCalls.get() + body.openStreamCalls.get()).as("not decoded").isZero();
  }

  @Test
  void responseBodyIsReleasedWhenReadingItFails() {
    Body broken =
        new Body() {
          @Override
          public long length() {
            return -1;
          }

          @Override
          public java.io.InputStream openStream() {
            return new java.io.InputStream() {
              @Override
              public int read() throws java.io.IOException {
                throw new java.io.IOException("connection reset");
              }
            };
          }
        };
    RawClient client =
        loopbackClient(
            TestOutbound.stub(
                request -> {
                  request.body().release();
                  return CompletableFuture.completedFuture(Response.of(broken));
                }));
    assertThat(failure(client.call("p", bytes("x"), TestOutbound.OPTIONS)))
        .isInstanceOfSatisfying(
            YarpcException.class,
            e -> {
              assertThat(e.code()).isEqualTo(Code.INTERNAL);
              assertThat(e.getMessage())
                  .isEqualTo(
                      "failed to decode \"raw\" response body for procedure \"p\" of service \"svc\": "
                          + "connection reset");
            });
    assertThat(broken.isReleased()).isTrue();
  }

  @Test
  void cancellingTheCallCancelsTheOutbound() {
    CompletableFuture<Response> pending = new CompletableFuture<>();
    RawClient client =
        loopbackClient(
            TestOutbound.stub(
                request -> {
                  request.body().release();
                  return pending;
                }));
    CompletableFuture<byte[]> f = client.call("p", bytes("x"), TestOutbound.OPTIONS);
    f.cancel(false);
    assertThat(pending).isCancelled();
  }

  @Test
  void oneway() throws Exception {
    CompletableFuture<byte[]> seen = new CompletableFuture<>();
    TestOutbound out = TestOutbound.loopback();
    RawClient client = loopbackClient(out, Raw.onewayProcedure("fire", seen::complete));
    client.callOneway("fire", bytes("ping"), TestOutbound.OPTIONS).get(5, TimeUnit.SECONDS);
    assertThat(seen.get(5, TimeUnit.SECONDS)).isEqualTo(bytes("ping"));

    assertThat(failure(client.callOneway("nope", bytes("x"), TestOutbound.OPTIONS)))
        .isInstanceOfSatisfying(
            YarpcException.class, e -> assertThat(e.code()).isEqualTo(Code.UNIMPLEMENTED));
  }
}
