package io.yarpc.transport.grpc;

import static io.yarpc.transport.grpc.EchoSupport.BIDI;
import static io.yarpc.transport.grpc.EchoSupport.CLIENT_STREAM;
import static io.yarpc.transport.grpc.EchoSupport.SERVER_STREAM;
import static io.yarpc.transport.grpc.EchoSupport.UNARY;
import static io.yarpc.transport.grpc.EchoSupport.WAIT_SECONDS;
import static io.yarpc.transport.grpc.EchoSupport.body;
import static io.yarpc.transport.grpc.EchoSupport.req;
import static io.yarpc.transport.grpc.EchoSupport.request;
import static io.yarpc.transport.grpc.EchoSupport.resp;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.google.rpc.ErrorInfo;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.yarpc.Dispatcher;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.DeadlinePolicy;
import io.yarpc.transport.Headers;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.ServerStream;
import io.yarpc.transport.StreamMessage;
import io.yarpc.transport.grpc.EchoSupport.Collector;
import io.yarpc.transport.grpc.testing.echo.EchoGrpc;
import io.yarpc.transport.grpc.testing.echo.EchoRequest;
import io.yarpc.transport.grpc.testing.echo.EchoResponse;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Interop, direction 1: a stock grpc-java generated stub (no YARPC on its side: no {@code rpc-*} metadata,
 * and no deadline unless a test sets one) calls procedures served by the YARPC gRPC inbound, in all four
 * shapes. The YARPC side parses and writes the protobuf messages by hand, from the bodies' byte access.
 */
class PlainClientInteropTest {
  private static final String SERVER = "echo";

  private GrpcTransport transport;
  private GrpcInbound inbound;
  private Dispatcher dispatcher;
  private ManagedChannel channel;
  private final AtomicReference<RequestMeta> seen = new AtomicReference<>();

  @BeforeEach
  void start() {
    transport = GrpcTransport.create();
    inbound = transport.inbound(new InetSocketAddress("127.0.0.1", 0));
    dispatcher = Dispatcher.builder(SERVER).inbound(inbound).build();
    dispatcher.register(procedures());
    dispatcher.start();
    channel = EchoSupport.plainChannel(inbound.port());
  }

  @AfterEach
  void stop() throws Exception {
    EchoSupport.shutdown(channel);
    dispatcher.stop();
    assertThat(transport.receiveStats().outstanding()).as("%s", transport.receiveStats()).isZero();
  }

  private EchoGrpc.EchoBlockingStub blocking() {
    return EchoGrpc.newBlockingStub(channel).withDeadlineAfter(WAIT_SECONDS, TimeUnit.SECONDS);
  }

  private EchoGrpc.EchoStub async() {
    return EchoGrpc.newStub(channel).withDeadlineAfter(WAIT_SECONDS, TimeUnit.SECONDS);
  }

  @Test
  void unary() {
    AtomicReference<Metadata> trailers = new AtomicReference<>();
    Metadata extra = new Metadata();
    extra.put(Metadata.Key.of("x-echo", Metadata.ASCII_STRING_MARSHALLER), "Hello-Header");
    EchoResponse response =
        blocking()
            .withInterceptors(
                MetadataUtils.newAttachHeadersInterceptor(extra),
                MetadataUtils.newCaptureMetadataInterceptor(new AtomicReference<>(), trailers))
            .unary(req("hi"));

    assertThat(response.getMessage()).isEqualTo("unary: hi");
    RequestMeta meta = seen.get();
    assertThat(meta.caller())
        .as("the product of grpc-java's user-agent")
        .isEqualTo("grpc-java-netty");
    assertThat(meta.service()).as("the dispatcher's name").isEqualTo(SERVER);
    assertThat(meta.procedure()).isEqualTo(UNARY);
    assertThat(meta.encoding()).as("from content-type application/grpc").isEqualTo("proto");
    assertThat(meta.transport()).isEqualTo("grpc");
    assertThat(meta.deadline()).isNotNull();
    assertThat(meta.headers().asMap())
        .containsEntry("x-echo", "Hello-Header")
        .doesNotContainKeys(
            "rpc-caller",
            "rpc-service",
            "rpc-encoding",
            "grpc-timeout",
            "te",
            "content-type",
            "user-agent",
            "grpc-accept-encoding");
    assertThat(trailers.get().get(Metadata.Key.of("rpc-service", Metadata.ASCII_STRING_MARSHALLER)))
        .isEqualTo(SERVER);
    assertThat(trailers.get().get(Metadata.Key.of("x-echo", Metadata.ASCII_STRING_MARSHALLER)))
        .isEqualTo("Hello-Header");
  }

  @Test
  void clientStreaming() throws Exception {
    Collector<EchoResponse> responses = new Collector<>();
    StreamObserver<EchoRequest> requests = async().clientStream(responses);
    for (String m : List.of("a", "b", "c")) {
      requests.onNext(req(m));
    }
    requests.onCompleted();
    assertThat(responses.await()).containsExactly(resp("a,b,c"));
    assertThat(seen.get().procedure()).isEqualTo(CLIENT_STREAM);
  }

  @Test
  void serverStreaming() {
    Iterator<EchoResponse> it = blocking().serverStream(req("5"));
    for (int i = 0; i < 5; i++) {
      assertThat(it.next()).isEqualTo(resp("5#" + i));
    }
    assertThat(it.hasNext()).isFalse();
  }

  @Test
  void bidiStreaming() throws Exception {
    Collector<EchoResponse> responses = new Collector<>();
    StreamObserver<EchoRequest> requests = async().bidi(responses);
    for (int i = 0; i < 20; i++) {
      requests.onNext(req("m" + i));
    }
    requests.onCompleted();
    List<EchoResponse> got = responses.await();
    assertThat(got).hasSize(20);
    for (int i = 0; i < 20; i++) {
      assertThat(got.get(i)).isEqualTo(resp("bidi: m" + i));
    }
  }

  @Test
  void errorDetailsReachPlainClient() {
    StatusRuntimeException e =
        catchThrowableOfType(StatusRuntimeException.class, () -> blocking().unary(req("fail")));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
    assertThat(e.getStatus().getDescription()).isEqualTo("precondition failed");
    com.google.rpc.Status status = StatusProto.fromThrowable(e);
    assertThat(status).isEqualTo(EchoSupport.errorStatus());
    assertThat(status.getDetails(0).is(ErrorInfo.class)).isTrue();
  }

  @Test
  void namedErrorPrefixesMessageAndSendsNameTrailer() {
    AtomicReference<Metadata> trailers = new AtomicReference<>();
    StatusRuntimeException e =
        catchThrowableOfType(
            StatusRuntimeException.class,
            () ->
                blocking()
                    .withInterceptors(
                        MetadataUtils.newCaptureMetadataInterceptor(
                            new AtomicReference<>(), trailers))
                    .unary(req("named")));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.ABORTED);
    assertThat(e.getStatus().getDescription()).isEqualTo("MyError: it failed");
    assertThat(
            trailers.get().get(Metadata.Key.of("rpc-error-name", Metadata.ASCII_STRING_MARSHALLER)))
        .isEqualTo("MyError");
  }

  @Test
  void streamErrorDetailsReachPlainClient() {
    Iterator<EchoResponse> it = blocking().serverStream(req("fail"));
    StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class, it::hasNext);
    assertThat(StatusProto.fromThrowable(e)).isEqualTo(EchoSupport.errorStatus());
  }

  @Test
  void unaryWithoutDeadlineGetsTheDefaultTimeout() {
    EchoResponse response = EchoGrpc.newBlockingStub(channel).unary(req("no deadline"));
    assertThat(response.getMessage()).isEqualTo("unary: no deadline");
    long left = seen.get().deadline().remainingNanos();
    assertThat(left)
        .isPositive()
        .isLessThanOrEqualTo(TimeUnit.SECONDS.toNanos(GrpcInbound.DEFAULT_TIMEOUT_SECONDS));
  }

  @Test
  void yarpcMetadataStillWins() {
    EchoResponse response =
        blocking()
            .withInterceptors(
                MetadataUtils.newAttachHeadersInterceptor(EchoSupport.yarpcHeaders("me", SERVER)))
            .unary(req("hi"));
    assertThat(response.getMessage()).isEqualTo("unary: hi");
    assertThat(seen.get().caller()).isEqualTo("me");
    assertThat(seen.get().service()).isEqualTo(SERVER);
  }

  @Test
  void anotherServiceIsStillRefusedByName() {
    Metadata md = new Metadata();
    md.put(Metadata.Key.of("rpc-service", Metadata.ASCII_STRING_MARSHALLER), "elsewhere");
    StatusRuntimeException e =
        catchThrowableOfType(
            StatusRuntimeException.class,
            () ->
                blocking()
                    .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md))
                    .unary(req("hi")));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED);
    assertThat(e.getStatus().getDescription())
        .startsWith("unrecognized service name \"elsewhere\"");
  }

  @Test
  void strictPolicyKeepsMissingTtlAndTheCapShortensDeadlines() throws Exception {
    GrpcInbound strict =
        transport
            .inboundBuilder(new InetSocketAddress("127.0.0.1", 0))
            .deadlinePolicy(DeadlinePolicy.strict())
            .defaultService(SERVER)
            .build();
    GrpcInbound capped =
        transport
            .inboundBuilder(new InetSocketAddress("127.0.0.1", 0))
            .deadlinePolicy(DeadlinePolicy.builder().maxTimeout(Duration.ofSeconds(2)).build())
            .build();
    Dispatcher second = Dispatcher.builder(SERVER).inbound(strict, capped).build();
    second.register(procedures());
    second.start();
    ManagedChannel strictChannel = EchoSupport.plainChannel(strict.port());
    ManagedChannel cappedChannel = EchoSupport.plainChannel(capped.port());
    try {
      StatusRuntimeException e =
          catchThrowableOfType(
              StatusRuntimeException.class,
              () -> EchoGrpc.newBlockingStub(strictChannel).unary(req("hi")));
      assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
      assertThat(e.getStatus().getDescription()).isEqualTo("missing TTL");

      assertThat(
              EchoGrpc.newBlockingStub(cappedChannel)
                  .withDeadlineAfter(1, TimeUnit.HOURS)
                  .unary(req("far"))
                  .getMessage())
          .isEqualTo("unary: far");
      assertThat(seen.get().deadline().remainingNanos())
          .isPositive()
          .isLessThanOrEqualTo(TimeUnit.SECONDS.toNanos(2));
      Iterator<EchoResponse> it = EchoGrpc.newBlockingStub(cappedChannel).serverStream(req("1"));
      assertThat(it.next()).isEqualTo(resp("1#0"));
      assertThat(it.hasNext()).isFalse();
      assertThat(seen.get().deadline()).as("a stream without a deadline gets the cap").isNotNull();
      assertThat(seen.get().deadline().remainingNanos())
          .isLessThanOrEqualTo(TimeUnit.SECONDS.toNanos(2));
    } finally {
      EchoSupport.shutdown(strictChannel);
      EchoSupport.shutdown(cappedChannel);
      second.stop();
    }
  }

  @Test
  void streamsNeedNoDeadline() {
    Iterator<EchoResponse> it = EchoGrpc.newBlockingStub(channel).serverStream(req("1"));
    assertThat(it.next()).isEqualTo(resp("1#0"));
    assertThat(it.hasNext()).isFalse();
    assertThat(seen.get().deadline()).as("no default for streams, no cap by default").isNull();
  }

  @Test
  void headerWithTwoValuesIsRefused() {
    Metadata twice = new Metadata();
    Metadata.Key<String> key = Metadata.Key.of("x-twice", Metadata.ASCII_STRING_MARSHALLER);
    twice.put(key, "1");
    twice.put(key, "2");
    StatusRuntimeException e =
        catchThrowableOfType(
            StatusRuntimeException.class,
            () ->
                blocking()
                    .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(twice))
                    .unary(req("hi")));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(e.getStatus().getDescription())
        .startsWith("header has more than one value: x-twice");
  }

  @Test
  void onewayProceduresAreUnimplemented() {
    dispatcher.register(
        Procedure.builder("Oneway::Fire")
            .encoding("proto")
            .oneway(request -> CompletableFuture.completedFuture(null))
            .build());
    io.grpc.MethodDescriptor<byte[], byte[]> method = rawMethod("Oneway/Fire");
    StatusRuntimeException e =
        catchThrowableOfType(
            StatusRuntimeException.class,
            () ->
                io.grpc.stub.ClientCalls.blockingUnaryCall(
                    channel,
                    method,
                    io.grpc.CallOptions.DEFAULT.withDeadlineAfter(WAIT_SECONDS, TimeUnit.SECONDS),
                    new byte[0]));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED);
    assertThat(e.getStatus().getDescription())
        .isEqualTo("transport grpc does not handle Oneway handlers");
  }

  @Test
  void unknownProcedure() {
    StatusRuntimeException e =
        catchThrowableOfType(
            StatusRuntimeException.class,
            () ->
                io.grpc.stub.ClientCalls.blockingUnaryCall(
                    channel,
                    rawMethod("yarpc.test.echo.Echo/Nope"),
                    io.grpc.CallOptions.DEFAULT.withDeadlineAfter(WAIT_SECONDS, TimeUnit.SECONDS),
                    new byte[0]));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED);
    assertThat(e.getStatus().getDescription())
        .isEqualTo("unrecognized procedure \"yarpc.test.echo.Echo::Nope\" for service \"echo\"");
  }

  @Test
  void defaultServicePathIsAPlainProcedureName() {
    dispatcher.register(
        Procedure.builder("echo/raw")
            .encoding("proto")
            .unary(
                request ->
                    CompletableFuture.completedFuture(
                        Response.of(io.yarpc.transport.Body.of(request.body().toByteArray()))))
            .build());
    byte[] got =
        io.grpc.stub.ClientCalls.blockingUnaryCall(
            channel,
            rawMethod("__default__/echo%2Fraw"),
            io.grpc.CallOptions.DEFAULT.withDeadlineAfter(WAIT_SECONDS, TimeUnit.SECONDS),
            new byte[] {7, 8});
    assertThat(got).containsExactly(7, 8);
  }

  /**
   * A handler's response headers named like fields HTTP/2 or gRPC own (as an echo of a curl request's
   * {@code content-length}) are dropped: sent as trailers they made clients reset the stream.
   */
  @Test
  void responseHeadersThatHttp2OwnsDoNotReachThePlainClient() {
    dispatcher.register(
        Procedure.builder("echo/headers")
            .encoding("proto")
            .unary(
                request ->
                    CompletableFuture.completedFuture(
                        Response.builder()
                            .body(io.yarpc.transport.Body.of(request.body().toByteArray()))
                            .headers(
                                io.yarpc.transport.Headers.of(
                                    "content-length", "2",
                                    "connection", "keep-alive",
                                    "grpc-status", "5",
                                    "x-kept", "yes"))
                            .build()))
            .build());
    AtomicReference<io.grpc.Metadata> headers = new AtomicReference<>();
    AtomicReference<io.grpc.Metadata> trailers = new AtomicReference<>();
    byte[] got =
        io.grpc.stub.ClientCalls.blockingUnaryCall(
            io.grpc.ClientInterceptors.intercept(
                channel,
                io.grpc.stub.MetadataUtils.newCaptureMetadataInterceptor(headers, trailers)),
            rawMethod("__default__/echo%2Fheaders"),
            io.grpc.CallOptions.DEFAULT.withDeadlineAfter(WAIT_SECONDS, TimeUnit.SECONDS),
            new byte[] {7, 8});
    assertThat(got).containsExactly(7, 8);
    io.grpc.Metadata.Key<String> kept =
        io.grpc.Metadata.Key.of("x-kept", io.grpc.Metadata.ASCII_STRING_MARSHALLER);
    assertThat(trailers.get().get(kept)).isEqualTo("yes");
    for (String owned : new String[] {"content-length", "connection"}) {
      io.grpc.Metadata.Key<String> k =
          io.grpc.Metadata.Key.of(owned, io.grpc.Metadata.ASCII_STRING_MARSHALLER);
      assertThat(trailers.get().get(k)).as(owned).isNull();
      assertThat(headers.get().get(k)).as(owned).isNull();
    }
  }

  @Test
  void gzipCompressedRequestsAreAccepted() {
    long copiedBefore = transport.receiveStats().copied();
    EchoResponse response = blocking().withCompression("gzip").unary(req("squeezed"));
    assertThat(response.getMessage()).isEqualTo("unary: squeezed");
    // a compressed message cannot be handed on as grpc-java's buffers: it was read into an array
    // once
    assertThat(transport.receiveStats().copied()).isEqualTo(copiedBefore + 1);
  }

  private static io.grpc.MethodDescriptor<byte[], byte[]> rawMethod(String fullName) {
    io.grpc.MethodDescriptor.Marshaller<byte[]> bytes =
        new io.grpc.MethodDescriptor.Marshaller<>() {
          @Override
          public java.io.InputStream stream(byte[] value) {
            return new java.io.ByteArrayInputStream(value);
          }

          @Override
          public byte[] parse(java.io.InputStream stream) {
            try {
              return stream.readAllBytes();
            } catch (java.io.IOException e) {
              throw new java.io.UncheckedIOException(e);
            }
          }
        };
    return io.grpc.MethodDescriptor.<byte[], byte[]>newBuilder()
        .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
        .setFullMethodName(fullName)
        .setRequestMarshaller(bytes)
        .setResponseMarshaller(bytes)
        .build();
  }

  // ---- the YARPC side
  // -----------------------------------------------------------------------------

  private List<Procedure> procedures() {
    return List.of(
        Procedure.builder(UNARY)
            .encoding("proto")
            .unary(
                request -> {
                  seen.set(request.meta());
                  EchoRequest r;
                  try {
                    r = request(request.body());
                  } catch (Exception e) {
                    return CompletableFuture.failedFuture(e);
                  }
                  if (r.getMessage().equals("fail")) {
                    return CompletableFuture.failedFuture(
                        YarpcException.of(Code.FAILED_PRECONDITION, "precondition failed")
                            .withDetails(EchoSupport.errorStatus().toByteArray()));
                  }
                  if (r.getMessage().equals("named")) {
                    return CompletableFuture.failedFuture(
                        YarpcException.of(Code.ABORTED, "it failed").withName("MyError"));
                  }
                  String echo = request.headers().get("x-echo");
                  return CompletableFuture.completedFuture(
                      Response.builder()
                          .headers(echo == null ? Headers.empty() : Headers.of("x-echo", echo))
                          .body(body(resp("unary: " + r.getMessage())))
                          .build());
                })
            .build(),
        streaming(
            CLIENT_STREAM,
            stream -> {
              StringBuilder all = new StringBuilder();
              for (StreamMessage m; (m = receive(stream)) != null; ) {
                try {
                  all.append(all.length() == 0 ? "" : ",").append(request(m.body()).getMessage());
                } finally {
                  m.release();
                }
              }
              stream
                  .send(StreamMessage.of(body(resp(all.toString()))))
                  .get(WAIT_SECONDS, TimeUnit.SECONDS);
            }),
        streaming(
            SERVER_STREAM,
            stream -> {
              StreamMessage first = receive(stream);
              String message;
              try {
                message = request(first.body()).getMessage();
              } finally {
                first.release();
              }
              if (message.equals("fail")) {
                throw YarpcException.of(Code.FAILED_PRECONDITION, "precondition failed")
                    .withDetails(EchoSupport.errorStatus().toByteArray());
              }
              int n = Integer.parseInt(message);
              for (int i = 0; i < n; i++) {
                stream
                    .send(StreamMessage.of(body(resp(n + "#" + i))))
                    .get(WAIT_SECONDS, TimeUnit.SECONDS);
              }
            }),
        streaming(
            BIDI,
            stream -> {
              for (StreamMessage m; (m = receive(stream)) != null; ) {
                String text;
                try {
                  text = request(m.body()).getMessage();
                } finally {
                  m.release();
                }
                stream
                    .send(StreamMessage.of(body(resp("bidi: " + text))))
                    .get(WAIT_SECONDS, TimeUnit.SECONDS);
              }
            }));
  }

  private interface StreamBody {
    void handle(ServerStream stream) throws Exception;
  }

  private Procedure streaming(String name, StreamBody body) {
    return Procedure.builder(name)
        .encoding("proto")
        .streaming(
            stream -> {
              seen.set(stream.meta());
              try {
                body.handle(stream);
                return CompletableFuture.completedFuture(null);
              } catch (Exception e) {
                return CompletableFuture.failedFuture(e);
              }
            })
        .build();
  }

  private static StreamMessage receive(ServerStream stream) throws Exception {
    return stream.receive().get(WAIT_SECONDS, TimeUnit.SECONDS);
  }
}
