package io.yarpc.encoding.protobuf;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import com.google.protobuf.util.JsonFormat;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.protobuf.ProtoFileDescriptorSupplier;
import io.grpc.stub.StreamObserver;
import io.yarpc.encoding.protobuf.CountingBody.Shape;
import io.yarpc.encoding.protobuf.testing.EchoGrpc;
import io.yarpc.encoding.protobuf.testing.EchoProto;
import io.yarpc.encoding.protobuf.testing.EchoRequest;
import io.yarpc.encoding.protobuf.testing.EchoResponse;
import io.yarpc.encoding.protobuf.testing.strict.Strict;
import io.yarpc.encoding.protobuf.testing.strict.StrictServiceGrpc;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Handler;
import io.yarpc.transport.Headers;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.RpcType;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The procedures made from a generated service, called directly as the dispatcher would (no transport):
 * naming and registration, the server-side decode paths and errors of the seed's tests, and the
 * application-error response a failed method leaves.
 */
class ProtobufProceduresTest {
  private static final String UNARY = "yarpc.test.protobuf.Echo::Unary";

  private final List<Procedure> procedures = ProtobufProcedures.of(new EchoService());

  private Handler<Request, Response> unary(String encoding) {
    return procedures.stream()
        .filter(p -> p.name().equals(UNARY) && p.encoding().equals(encoding))
        .findFirst()
        .orElseThrow()
        .handlerSpec()
        .unary();
  }

  private static RequestMeta meta(String encoding) {
    return RequestMeta.builder()
        .caller("tester")
        .service("echo")
        .procedure(UNARY)
        .encoding(encoding)
        .headers(Headers.of("x-trace", "direct"))
        .deadline(Deadline.after(5, TimeUnit.SECONDS))
        .build();
  }

  private static Response call(Handler<Request, Response> h, Request request) throws Exception {
    return h.handle(request).get(5, TimeUnit.SECONDS);
  }

  private static YarpcException failure(Handler<Request, Response> h, Request request)
      throws Exception {
    try {
      Response r = call(h, request);
      r.body().release();
      throw new AssertionError("expected the call to fail");
    } catch (ExecutionException e) {
      return YarpcException.from(e.getCause());
    }
  }

  private static EchoResponse decode(Response r, String encoding) throws Exception {
    try {
      return ProtobufCodec.of(EchoResponse.getDefaultInstance()).decode(r.body(), encoding);
    } finally {
      r.body().release();
    }
  }

  @Test
  void everyMethodIsRegisteredForBothEncodings() {
    assertThat(procedures)
        .extracting(p -> p.name() + " " + p.encoding() + " " + p.handlerSpec().type())
        .containsExactly(
            "yarpc.test.protobuf.Echo::Bidi proto " + RpcType.STREAMING,
            "yarpc.test.protobuf.Echo::Bidi json " + RpcType.STREAMING,
            "yarpc.test.protobuf.Echo::ClientStream proto " + RpcType.STREAMING,
            "yarpc.test.protobuf.Echo::ClientStream json " + RpcType.STREAMING,
            "yarpc.test.protobuf.Echo::ServerStream proto " + RpcType.STREAMING,
            "yarpc.test.protobuf.Echo::ServerStream json " + RpcType.STREAMING,
            "yarpc.test.protobuf.Echo::Unary proto " + RpcType.UNARY,
            "yarpc.test.protobuf.Echo::Unary json " + RpcType.UNARY);
    assertThat(procedures.get(0).signature())
        .isEqualTo(
            "Bidi(stream yarpc.test.protobuf.EchoRequest) returns (stream yarpc.test.protobuf.EchoResponse)");
    assertThat(ProtobufProcedures.builder(new EchoService()).service("other").build())
        .allSatisfy(p -> assertThat(p.service()).isEqualTo("other"));
  }

  @Test
  void everyProcedureCarriesTheServiceFileDescriptorAsItsSchema() {
    assertThat(procedures)
        .allSatisfy(
            p -> {
              assertThat(p.schema()).isInstanceOf(ProtoFileDescriptorSupplier.class);
              assertThat(((ProtoFileDescriptorSupplier) p.schema()).getFileDescriptor())
                  .isSameAs(EchoProto.getDescriptor());
            });
    // a hand-built descriptor without a schema gives procedures without one
    ServerServiceDefinition bare =
        ServerServiceDefinition.builder("bare.Svc")
            .addMethod(
                EchoGrpc.getUnaryMethod().toBuilder()
                    .setFullMethodName("bare.Svc/Unary")
                    .setSchemaDescriptor(null)
                    .build(),
                (call, headers) -> new ServerCall.Listener<>() {})
            .build();
    assertThat(ProtobufProcedures.of(bare))
        .isNotEmpty()
        .allSatisfy(p -> assertThat(p.schema()).isNull());
  }

  @ParameterizedTest
  @EnumSource(
      value = Shape.class,
      names = {"HEAP", "DIRECT", "MULTI_DIRECT"})
  void fastPathUsesByteAccessNeverTheStream(Shape shape) throws Exception {
    CountingBody body = new CountingBody(EndToEndTestBase.request("fast").toByteArray(), shape);

    EchoResponse r = decode(call(unary("proto"), Request.of(meta("proto"), body)), "proto");

    assertThat(r.getMessage()).isEqualTo("fast");
    assertThat(r.getHeadersMap()).containsEntry("x-trace", "direct");
    assertThat(body.byteBuffersCalls).isEqualTo(1);
    assertThat(body.openStreamCalls).isZero();
    assertThat(body.isReleased())
        .as("the request body is the invocation's, not released here")
        .isFalse();
  }

  @Test
  void fallbackReadsAPlainStream() throws Exception {
    CountingBody body =
        new CountingBody(EndToEndTestBase.request("slow").toByteArray(), Shape.STREAM);

    assertThat(decode(call(unary("proto"), Request.of(meta("proto"), body)), "proto").getMessage())
        .isEqualTo("slow");
    assertThat(body.openStreamCalls).isEqualTo(1);
    assertThat(body.byteBuffersCalls).isZero();
  }

  @ParameterizedTest
  @ValueSource(strings = {"proto", "json"})
  void emptyBodyIsTheDefaultRequest(String encoding) throws Exception {
    EchoResponse r =
        decode(call(unary(encoding), Request.of(meta(encoding), Body.empty())), encoding);
    assertThat(r.getMessage()).isEmpty();
  }

  @Test
  void emptyBodyForRequiredContentIsInvalidArgument() throws Exception {
    List<Procedure> strict =
        ProtobufProcedures.of(
            new StrictServiceGrpc.StrictServiceImplBase() {
              @Override
              public void check(Strict request, StreamObserver<Strict> responseObserver) {
                responseObserver.onNext(request);
                responseObserver.onCompleted();
              }
            });
    Handler<Request, Response> h =
        strict.stream()
            .filter(p -> p.encoding().equals("proto"))
            .findFirst()
            .orElseThrow()
            .handlerSpec()
            .unary();
    RequestMeta meta =
        meta("proto").toBuilder()
            .procedure("yarpc.test.protobuf.strict.StrictService::Check")
            .build();

    YarpcException e = failure(h, Request.of(meta, Body.empty()));

    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(e.getMessage())
        .isEqualTo(
            "failed to decode \"proto\" request body for procedure "
                + "\"yarpc.test.protobuf.strict.StrictService::Check\" of service \"echo\" from caller \"tester\": "
                + "Message missing required fields: id");
    Response ok =
        call(h, Request.of(meta, Body.of(Strict.newBuilder().setId("i").build().toByteArray())));
    ok.body().release();
  }

  @Test
  void malformedProtobufIsInvalidArgument() throws Exception {
    YarpcException e =
        failure(unary("proto"), Request.of(meta("proto"), Body.of(new byte[] {0x0a, 0x05, 'a'})));

    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(e.getMessage())
        .isEqualTo(
            "failed to decode \"proto\" request body for procedure "
                + "\"yarpc.test.protobuf.Echo::Unary\" of service \"echo\" from caller \"tester\": While parsing a "
                + "protocol message, the input ended unexpectedly in the middle of a field.  This could mean either "
                + "that the input has been truncated or that an embedded message misreported its own length.");
  }

  @Test
  void malformedJsonIsInvalidArgument() throws Exception {
    YarpcException e =
        failure(
            unary("json"), Request.of(meta("json"), Body.of("{\"count\":\"x\"}".getBytes(UTF_8))));
    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(e.getMessage())
        .startsWith(
            "failed to decode \"json\" request body for procedure "
                + "\"yarpc.test.protobuf.Echo::Unary\" of service \"echo\" from caller \"tester\": ");
  }

  @Test
  void wrongEncodingIsInvalidArgument() throws Exception {
    YarpcException e =
        failure(
            unary("proto"),
            Request.of(meta("thrift"), Body.of(EndToEndTestBase.request("x").toByteArray())));

    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(e.getMessage())
        .isEqualTo(
            "failed to decode [proto json] request body for procedure "
                + "\"yarpc.test.protobuf.Echo::Unary\" of service \"echo\" from caller \"tester\": expected one of "
                + "encodings [proto json] but got \"thrift\"");
  }

  @ParameterizedTest
  @ValueSource(strings = {"proto", "json"})
  void statusDetailsBecomeErrorDetailsAndAnApplicationErrorResponse(String encoding)
      throws Exception {
    Body request =
        ProtobufCodec.of(EchoRequest.getDefaultInstance())
            .encode(EndToEndTestBase.failing("status-details"), encoding);

    YarpcException e = failure(unary(encoding), Request.of(meta(encoding), request));

    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(e.getMessage()).isEqualTo("rude request");
    com.google.rpc.Status st;
    if (encoding.equals("json")) {
      assertThat(new String(e.details(), UTF_8))
          .as("details in the request's encoding")
          .startsWith("{");
      com.google.rpc.Status.Builder b = com.google.rpc.Status.newBuilder();
      JsonFormat.parser()
          .usingTypeRegistry(
              com.google.protobuf.TypeRegistry.newBuilder()
                  .add(com.google.rpc.BadRequest.getDescriptor())
                  .build())
          .merge(new String(e.details(), UTF_8), b);
      st = b.build();
    } else {
      st = com.google.rpc.Status.parseFrom(e.details());
    }
    assertThat(st.getCode()).isEqualTo(3);
    assertThat(st.getDetailsCount()).isEqualTo(2);
    assertThat(ProtobufErrors.applicationErrorName(st)).isEqualTo("BadRequest");

    Response attached = e.response();
    assertThat(attached.isApplicationError()).isTrue();
    assertThat(attached.applicationErrorMeta().code()).isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(attached.applicationErrorMeta().name()).isEqualTo("BadRequest");
    assertThat(attached.applicationErrorMeta().details())
        .isEqualTo(
            "[BadRequest{field_violations { field: "
                + "\"message\" description: \"too rude\" }} ErrorInfo{reason: \"RUDE\" domain: \"yarpc.io\" metadata "
                + "{ key: \"k\" value: \"v\" }}]");
    assertThat(attached.body().length())
        .as(
            "no body: the details travel as the error's, each transport its own way (TChannel in its body)")
        .isZero();
    attached.body().release();
  }

  @Test
  void handlerExceptionsBecomeUnknownWithYarpcGosMessage() throws Exception {
    YarpcException e =
        failure(
            unary("proto"),
            Request.of(meta("proto"), Body.of(EndToEndTestBase.failing("throw").toByteArray())));

    assertThat(e.code()).isEqualTo(Code.UNKNOWN);
    assertThat(e.getMessage())
        .isEqualTo(
            "error for service \"echo\" and procedure \"yarpc.test.protobuf.Echo::Unary\": boom");
    assertThat(e.response().isApplicationError()).isTrue();
    e.response().body().release();
  }

  @Test
  void interceptorsSeeTheRequestHeadersAsMetadata() throws Exception {
    AtomicReference<Metadata> seen = new AtomicReference<>();
    ServerInterceptor capture =
        new ServerInterceptor() {
          @Override
          public <Q, R> ServerCall.Listener<Q> interceptCall(
              ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
            seen.set(headers);
            return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(
                next.startCall(call, headers)) {};
          }
        };
    Handler<Request, Response> h =
        ProtobufProcedures.of(ServerInterceptors.intercept(new EchoService(), capture)).stream()
            .filter(p -> p.name().equals(UNARY) && p.encoding().equals("proto"))
            .findFirst()
            .orElseThrow()
            .handlerSpec()
            .unary();

    Response r =
        call(h, Request.of(meta("proto"), Body.of(EndToEndTestBase.request("i").toByteArray())));
    r.body().release();

    assertThat(seen.get().get(EndToEndTestBase.TRACE)).isEqualTo("direct");
  }

  @Test
  void responseIsALazyBodyOfKnownLength() throws Exception {
    EchoRequest req =
        EchoRequest.newBuilder().setPayload(ByteString.copyFrom(new byte[1000])).build();
    Response r = call(unary("proto"), Request.of(meta("proto"), Body.of(req.toByteArray())));
    try {
      assertThat(r.body().hasByteAccess())
          .as("serialised only when the transport writes it")
          .isFalse();
      assertThat(r.body().length()).isGreaterThan(1000);
      assertThat(r.headers().get("x-echoed-by")).isEqualTo("echo-service");
    } finally {
      r.body().release();
    }
  }

  @Test
  void unaryHandlerCompletesAsynchronouslyToo() throws Exception {
    CompletableFuture<StreamObserver<EchoResponse>> pending = new CompletableFuture<>();
    Handler<Request, Response> h =
        ProtobufProcedures.of(
                new io.yarpc.encoding.protobuf.testing.EchoGrpc.EchoImplBase() {
                  @Override
                  public void unary(
                      EchoRequest request, StreamObserver<EchoResponse> responseObserver) {
                    pending.complete(responseObserver); // answered later, from another thread
                  }
                })
            .stream()
            .filter(p -> p.name().equals(UNARY) && p.encoding().equals("proto"))
            .findFirst()
            .orElseThrow()
            .handlerSpec()
            .unary();

    CompletableFuture<Response> f =
        h.handle(
            Request.of(meta("proto"), Body.of(EndToEndTestBase.request("later").toByteArray())));
    assertThat(f).isNotDone();
    StreamObserver<EchoResponse> out = pending.get(5, TimeUnit.SECONDS);
    new Thread(
            () -> {
              out.onNext(EchoResponse.newBuilder().setMessage("done").build());
              out.onCompleted();
            })
        .start();

    assertThat(decode(f.get(5, TimeUnit.SECONDS), "proto").getMessage()).isEqualTo("done");
  }
}
