package io.yarpc.encoding.protobuf;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.rpc.BadRequest;
import com.google.rpc.ErrorInfo;
import io.grpc.Channel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.encoding.protobuf.internal.DecodeStats;
import io.yarpc.encoding.protobuf.testing.EchoGrpc;
import io.yarpc.encoding.protobuf.testing.EchoRequest;
import io.yarpc.encoding.protobuf.testing.EchoResponse;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The test service served with {@link ProtobufProcedures} on one transport's inbound and called with
 * grpc-java's generated stubs through {@link YarpcChannel} over the same transport's outbound, in both
 * encodings. Each transport's test extends this with its inbound and outbounds.
 */
abstract class EndToEndTestBase {
  static final Metadata.Key<String> TRACE =
      Metadata.Key.of("x-trace", Metadata.ASCII_STRING_MARSHALLER);
  static final Metadata.Key<String> ECHOED_BY =
      Metadata.Key.of("x-echoed-by", Metadata.ASCII_STRING_MARSHALLER);

  EchoService service;
  Dispatcher server;
  Dispatcher client;
  final AtomicInteger unaryMiddlewareCalls = new AtomicInteger();
  final AtomicInteger streamMiddlewareCalls = new AtomicInteger();

  /** The server's inbounds (a new set per test). */
  abstract List<Inbound> serverInbounds();

  /** The client's outbounds to them (called after the server started). */
  abstract Outbounds clientOutbounds();

  /** Whether the transport carries streams. */
  abstract boolean supportsStreaming();

  /** Whether google.rpc.Status details survive in the JSON encoding (gRPC only carries binary ones). */
  boolean carriesJsonErrorDetails() {
    return true;
  }

  /**
   * Whether errors with binary google.rpc.Status details get through; false where a transport bug keeps
   * them from it (see the override).
   */
  boolean carriesBinaryErrorDetails() {
    return true;
  }

  /** Checks that the transports released every body; called after both dispatchers stopped. */
  void assertNoLeaks() {}

  /** Stops what the transports own beyond the dispatchers. */
  void closeTransports() {}

  @BeforeEach
  void startDispatchers() {
    service = new EchoService();
    server = Dispatcher.builder("echo").inbound(serverInbounds().toArray(new Inbound[0])).build();
    server.register(
        ProtobufProcedures.of(
            io.grpc.ServerInterceptors.intercept(service, new MetadataEchoInterceptor())));
    server.start();
    client =
        Dispatcher.builder("client")
            .outbound("echo", clientOutbounds())
            .unaryOutboundMiddleware(
                (request, next) -> {
                  unaryMiddlewareCalls.incrementAndGet();
                  return next.handle(
                      request.withMeta(
                          request.meta().toBuilder()
                              .headers(
                                  request.headers().toBuilder()
                                      .add("x-middleware", "unary")
                                      .build())
                              .build()));
                })
            .streamOutboundMiddleware(
                (meta, next) -> {
                  streamMiddlewareCalls.incrementAndGet();
                  return next.handle(
                      meta.toBuilder()
                          .headers(meta.headers().toBuilder().add("x-middleware", "stream").build())
                          .build());
                })
            .build();
    client.start();
    DecodeStats.reset();
  }

  @AfterEach
  void stopDispatchers() {
    try {
      if (client != null) {
        client.stop();
      }
      if (server != null) {
        server.stop();
      }
      assertNoLeaks();
    } finally {
      closeTransports();
    }
  }

  Channel channel(String encoding) {
    return YarpcChannel.of(client.clientConfig("echo"), encoding);
  }

  EchoGrpc.EchoBlockingStub blocking(String encoding) {
    return EchoGrpc.newBlockingStub(channel(encoding)).withDeadlineAfter(10, SECONDS);
  }

  static EchoRequest request(String message) {
    return EchoRequest.newBuilder()
        .setMessage(message)
        .setPayload(ByteString.copyFromUtf8("payload-" + message))
        .build();
  }

  static EchoRequest failing(String how) {
    return EchoRequest.newBuilder().setMessage("x").setFail(how).build();
  }

  // ---- unary
  // ---------------------------------------------------------------------------------------

  @ParameterizedTest
  @ValueSource(strings = {"proto", "json"})
  void blockingStubUnaryCarriesHeadersDeadlineAndResponseHeaders(String encoding) {
    Metadata headers = new Metadata();
    headers.put(TRACE, "t-1");
    AtomicReference<Metadata> responseHeaders = new AtomicReference<>();
    AtomicReference<Metadata> trailers = new AtomicReference<>();
    EchoGrpc.EchoBlockingStub stub =
        EchoGrpc.newBlockingStub(channel(encoding))
            .withDeadlineAfter(5, SECONDS)
            .withInterceptors(
                MetadataUtils.newAttachHeadersInterceptor(headers),
                MetadataUtils.newCaptureMetadataInterceptor(responseHeaders, trailers));

    EchoResponse r = stub.unary(request("hello"));

    assertThat(r.getMessage()).isEqualTo("hello");
    assertThat(r.getPayload().toStringUtf8()).isEqualTo("payload-hello");
    assertThat(r.getHeadersMap())
        .as("stub metadata and outbound middleware headers reach the handler (Call.current())")
        .containsEntry("x-trace", "t-1")
        .containsEntry("x-middleware", "unary")
        .as("and the grpc Context's metadata")
        .containsEntry("context:x-trace", "t-1")
        .containsKey("context:deadline-ms");
    assertThat(r.getDeadlineMillis())
        .as("the stub deadline became the call's")
        .isBetween(1L, 5000L);
    assertThat(Long.parseLong(r.getHeadersMap().get("context:deadline-ms"))).isBetween(0L, 5000L);
    // a YARPC response header travels with the trailers (on gRPC, as yarpc-go puts it; elsewhere
    // the one set of headers is both)
    assertThat(trailers.get().get(ECHOED_BY)).isEqualTo("echo-service");
    assertThat(unaryMiddlewareCalls).hasValue(1);
  }

  /** Binary bytes that are not text: every byte value a base64 round trip could get wrong. */
  static final byte[] BINARY = {0, 1, (byte) 0x80, (byte) 0xff, '\n', '=', 0x7f, (byte) 0xfe, 42};

  @ParameterizedTest
  @ValueSource(strings = {"proto", "json"})
  void serverInterceptorHeadersAndTrailersReachTheStub(String encoding) {
    Metadata headers = new Metadata();
    headers.put(MetadataEchoInterceptor.ASCII, "Hello-Echo");
    headers.put(MetadataEchoInterceptor.BIN, BINARY);
    AtomicReference<Metadata> responseHeaders = new AtomicReference<>();
    AtomicReference<Metadata> trailers = new AtomicReference<>();
    EchoResponse r =
        blocking(encoding)
            .withInterceptors(
                MetadataUtils.newAttachHeadersInterceptor(headers),
                MetadataUtils.newCaptureMetadataInterceptor(responseHeaders, trailers))
            .unary(request("echo metadata"));

    assertThat(r.getMessage()).isEqualTo("echo metadata");
    assertThat(r.getHeadersMap())
        .as("the handler sees the binary header as base64")
        .containsEntry(
            "x-echo-bin", java.util.Base64.getEncoder().withoutPadding().encodeToString(BINARY));
    assertThat(responseHeaders.get().get(MetadataEchoInterceptor.ASCII)).isEqualTo("Hello-Echo");
    assertThat(responseHeaders.get().get(MetadataEchoInterceptor.BIN)).containsExactly(BINARY);
    assertThat(trailers.get().get(MetadataEchoInterceptor.BIN)).containsExactly(BINARY);
    assertThat(trailers.get().get(ECHOED_BY))
        .as("YARPC response headers are trailers")
        .isEqualTo("echo-service");
  }

  @Test
  void serverInterceptorHeadersAndTrailersReachStreamingStubs() {
    assumeTrue(supportsStreaming(), "transport does not stream");
    Metadata headers = new Metadata();
    headers.put(MetadataEchoInterceptor.ASCII, "Stream-Echo");
    headers.put(MetadataEchoInterceptor.BIN, BINARY);
    AtomicReference<Metadata> responseHeaders = new AtomicReference<>();
    AtomicReference<Metadata> trailers = new AtomicReference<>();
    Iterator<EchoResponse> it =
        blocking("proto")
            .withInterceptors(
                MetadataUtils.newAttachHeadersInterceptor(headers),
                MetadataUtils.newCaptureMetadataInterceptor(responseHeaders, trailers))
            .serverStream(request("s").toBuilder().setCount(3).build());
    List<EchoResponse> all = new ArrayList<>();
    it.forEachRemaining(all::add);
    assertThat(all).hasSize(3);
    assertThat(responseHeaders.get().get(MetadataEchoInterceptor.ASCII)).isEqualTo("Stream-Echo");
    assertThat(responseHeaders.get().get(MetadataEchoInterceptor.BIN)).containsExactly(BINARY);
    assertThat(trailers.get().get(MetadataEchoInterceptor.BIN)).containsExactly(BINARY);
  }

  @Test
  void callWhoseDeadlineHasPassedFailsAtOnceAndSendsNothing() {
    io.grpc.Deadline passed = io.grpc.Deadline.after(-1, SECONDS);
    StatusRuntimeException unary =
        org.assertj.core.api.Assertions.catchThrowableOfType(
            StatusRuntimeException.class,
            () ->
                EchoGrpc.newBlockingStub(channel("proto"))
                    .withDeadline(passed)
                    .unary(request("late")));
    assertThat(unary.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(unaryMiddlewareCalls).as("nothing reached the outbound").hasValue(0);
    if (supportsStreaming()) {
      Iterator<EchoResponse> it =
          EchoGrpc.newBlockingStub(channel("proto"))
              .withDeadline(passed)
              .serverStream(request("late").toBuilder().setCount(1).build());
      StatusRuntimeException stream =
          org.assertj.core.api.Assertions.catchThrowableOfType(
              StatusRuntimeException.class, it::hasNext);
      assertThat(stream.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
      assertThat(streamMiddlewareCalls).hasValue(0);
    }
    assertThat(service.serverStreamSent).hasValue(0);
  }

  @Test
  void clientStreamTracersInCallOptionsAreDriven() {
    RecordingTracer.Factory factory = new RecordingTracer.Factory();
    EchoResponse r =
        blocking("proto").withInterceptors(factory.interceptor()).unary(request("traced"));
    assertThat(r.getMessage()).isEqualTo("traced");
    StatusRuntimeException e =
        org.assertj.core.api.Assertions.catchThrowableOfType(
            StatusRuntimeException.class,
            () ->
                blocking("proto")
                    .withInterceptors(factory.interceptor())
                    .unary(request("x").toBuilder().setFail("plain-status").build()));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(factory.tracers).hasSize(2);
    assertThat(factory.tracers.get(0).events)
        .containsExactly(
            "streamCreated",
            "outboundHeaders",
            "outboundMessage(0)",
            "outboundMessageSent(0)",
            "inboundHeaders",
            "inboundMessage(0)",
            "inboundMessageRead(0)",
            "inboundTrailers",
            "streamClosed(OK)");
    assertThat(factory.tracers.get(0).outboundBytes)
        .isEqualTo(request("traced").getSerializedSize());
    assertThat(factory.tracers.get(0).inboundBytes).isEqualTo(r.getSerializedSize());
    assertThat(factory.tracers.get(1).events)
        .startsWith("streamCreated", "outboundHeaders", "outboundMessage(0)")
        .endsWith("inboundTrailers", "streamClosed(NOT_FOUND)");
    StatusRuntimeException late =
        org.assertj.core.api.Assertions.catchThrowableOfType(
            StatusRuntimeException.class,
            () ->
                EchoGrpc.newBlockingStub(channel("proto"))
                    .withInterceptors(factory.interceptor())
                    .withDeadline(io.grpc.Deadline.after(-1, SECONDS))
                    .unary(request("late")));
    assertThat(late.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(factory.tracers.get(2).events)
        .as("nothing went out")
        .containsExactly("streamClosed(DEADLINE_EXCEEDED)");
  }

  @Test
  void futureAndAsyncStubsWork() throws Exception {
    EchoResponse viaFuture =
        EchoGrpc.newFutureStub(channel("proto"))
            .withDeadlineAfter(5, SECONDS)
            .unary(request("future"))
            .get(5, SECONDS);
    assertThat(viaFuture.getMessage()).isEqualTo("future");

    CompletableFuture<EchoResponse> async = new CompletableFuture<>();
    EchoGrpc.newStub(channel("json"))
        .withDeadlineAfter(5, SECONDS)
        .unary(request("async"), observer(async));
    assertThat(async.get(5, SECONDS).getMessage()).isEqualTo("async");
  }

  @Test
  void requestsAreDecodedFromByteAccess() {
    EchoResponse r = blocking("proto").unary(request("fast"));
    assertThat(r.getMessage()).isEqualTo("fast");
    assertThat(DecodeStats.STREAMED.sum()).as("no body was read through its stream").isZero();
    assertThat(
            DecodeStats.IN_PLACE.sum()
                + DecodeStats.IN_PLACE_ALIASED.sum()
                + DecodeStats.COPIED.sum())
        .as("request and response")
        .isEqualTo(2);
  }

  @Test
  void largePayloadsRoundTrip() {
    byte[] big = new byte[3 << 20];
    new java.util.Random(7).nextBytes(big);
    EchoRequest req = EchoRequest.newBuilder().setPayload(ByteString.copyFrom(big)).build();
    assertThat(blocking("proto").unary(req).getPayload()).isEqualTo(req.getPayload());
  }

  @Test
  void missingDeadlineIsRefusedUnlessTheChannelHasADefault() {
    assertThatThrownBy(() -> EchoGrpc.newBlockingStub(channel("proto")).unary(request("x")))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
              assertThat(e.getStatus().getDescription()).contains("missing TTL");
            });
    Channel withDefault =
        YarpcChannel.builder(client.clientConfig("echo"))
            .defaultTimeout(Duration.ofSeconds(3))
            .build();
    assertThat(EchoGrpc.newBlockingStub(withDefault).unary(request("y")).getDeadlineMillis())
        .isBetween(1L, 3000L);
  }

  // ---- errors
  // --------------------------------------------------------------------------------------

  @ParameterizedTest
  @ValueSource(strings = {"proto", "json"})
  void statusDetailsRoundTrip(String encoding) throws Exception {
    assumeTrue(
        encoding.equals("json") || carriesBinaryErrorDetails(), "binary error details not carried");
    StatusRuntimeException e =
        catchStatus(() -> blocking(encoding).unary(failing("status-details")));

    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(e.getStatus().getDescription()).isEqualTo("rude request");
    if (encoding.equals("json") && !carriesJsonErrorDetails()) {
      return;
    }
    com.google.rpc.Status st = StatusProto.fromThrowable(e);
    assertThat(st).isNotNull();
    assertThat(st.getCode()).isEqualTo(Code.INVALID_ARGUMENT.value());
    assertThat(st.getMessage()).isEqualTo("rude request");
    assertThat(st.getDetailsList()).hasSize(2);
    assertThat(st.getDetails(0).unpack(BadRequest.class)).isEqualTo(EchoService.BAD_REQUEST);
    assertThat(st.getDetails(1).unpack(ErrorInfo.class)).isEqualTo(EchoService.ERROR_INFO);
    assertThat(ProtobufErrors.status(e)).contains(st);
  }

  @ParameterizedTest
  @ValueSource(strings = {"yarpc-details", "throw-yarpc-details"})
  void yarpcErrorsWithDetailsRoundTrip(String how) throws Exception {
    assumeTrue(carriesBinaryErrorDetails(), "binary error details not carried");
    StatusRuntimeException e = catchStatus(() -> blocking("proto").unary(failing(how)));

    com.google.rpc.Status st = StatusProto.fromThrowable(e);
    assertThat(st).isNotNull();
    if (how.equals("yarpc-details")) {
      assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
      assertThat(e.getStatus().getDescription()).isEqualTo("not now");
      assertThat(st.getDetails(0).unpack(ErrorInfo.class)).isEqualTo(EchoService.ERROR_INFO);
      assertThat(st.getDetails(1).unpack(BadRequest.class)).isEqualTo(EchoService.BAD_REQUEST);
    } else {
      assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.ALREADY_EXISTS);
      assertThat(e.getStatus().getDescription()).isEqualTo("exists");
      assertThat(st.getDetailsList()).containsExactly(Any.pack(EchoService.ERROR_INFO));
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"proto", "json"})
  void applicationErrorNameIsTheFirstDetailsMessageName(String encoding) throws Exception {
    assumeTrue(
        encoding.equals("json") ? carriesJsonErrorDetails() : carriesBinaryErrorDetails(),
        "error details not carried");
    // A plain YARPC client call, to see what the transport delivered besides the status.
    RequestMeta meta =
        RequestMeta.builder()
            .procedure("yarpc.test.protobuf.Echo::Unary")
            .encoding(encoding)
            .deadline(Deadline.after(5, SECONDS))
            .build();
    Body body =
        ProtobufCodec.of(EchoRequest.getDefaultInstance())
            .encode(failing("status-details"), encoding);
    CompletableFuture<?> f = client.clientConfig("echo").call(Request.of(meta, body));
    YarpcException e = YarpcException.from(catchThrowable(f));
    try {
      assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
      assertThat(e.getMessage()).isEqualTo("rude request");
      com.google.rpc.Status st = ProtobufErrors.status(e).orElseThrow();
      assertThat(st.getDetailsCount()).isEqualTo(2);
      assertThat(e.response())
          .as("the application-error response travels with the error")
          .isNotNull();
      assertThat(e.response().isApplicationError()).isTrue();
      assertThat(e.response().applicationErrorMeta().name()).isEqualTo("BadRequest");
      assertThat(e.response().applicationErrorMeta().details())
          .startsWith("[BadRequest{")
          .contains("ErrorInfo{");
    } finally {
      if (e.response() != null) {
        e.response().body().release();
      }
    }
  }

  @Test
  void plainStatusesAndExceptionsMapToCodes() {
    StatusRuntimeException notFound =
        catchStatus(() -> blocking("proto").unary(failing("plain-status")));
    assertThat(notFound.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(notFound.getStatus().getDescription()).isEqualTo("no such echo");
    assertThat(StatusProto.fromThrowable(notFound).getDetailsCount()).isZero();

    StatusRuntimeException thrown = catchStatus(() -> blocking("proto").unary(failing("throw")));
    assertThat(thrown.getStatus().getCode()).isEqualTo(Status.Code.UNKNOWN);
    assertThat(thrown.getStatus().getDescription())
        .isEqualTo(
            "error for service \"echo\" and procedure \"yarpc.test.protobuf.Echo::Unary\": unexpected error (the server logged it)");

    StatusRuntimeException onError = catchStatus(() -> blocking("json").unary(failing("on-error")));
    assertThat(onError.getStatus().getCode()).isEqualTo(Status.Code.UNKNOWN);
    // a plain exception given to onError is as unexpected as a thrown one: its text stays on the
    // server
    assertThat(onError.getStatus().getDescription())
        .endsWith(": unexpected error (the server logged it)");
  }

  @Test
  void aHandlersOnCancelRunsOnTheCallbackPoolNotOnATransportOrTimerThread() throws Exception {
    StatusRuntimeException e =
        catchStatus(
            () ->
                EchoGrpc.newBlockingStub(channel("proto"))
                    .withDeadlineAfter(300, MILLISECONDS)
                    .unary(failing("await-cancel")));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(service.cancelled.await(5, SECONDS)).as("the handler's onCancel ran").isTrue();
    assertThat(service.cancelHandlerThread).startsWith("yarpc-protobuf-callback-");
  }

  @Test
  void deadlineExceeded() throws Exception {
    StatusRuntimeException e =
        catchStatus(
            () ->
                EchoGrpc.newBlockingStub(channel("proto"))
                    .withDeadlineAfter(300, MILLISECONDS)
                    .unary(failing("sleep")));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(service.cancelled.await(5, SECONDS))
        .as("the handler's grpc context was cancelled")
        .isTrue();
  }

  @Test
  void wrongEncodingIsRejected() {
    RequestMeta meta =
        RequestMeta.builder()
            .procedure("yarpc.test.protobuf.Echo::Unary")
            .encoding("raw")
            .deadline(Deadline.after(5, SECONDS))
            .build();
    YarpcException e =
        YarpcException.from(
            catchThrowable(
                client
                    .clientConfig("echo")
                    .call(Request.of(meta, Body.of(request("x").toByteArray())))));
    if (e.response() != null) {
      e.response().body().release();
    }
    // Both encodings are registered, so the router finds no "raw" procedure.
    assertThat(e.code()).isIn(Code.UNIMPLEMENTED, Code.INVALID_ARGUMENT);
  }

  @Test
  void malformedRequestIsInvalidArgument() {
    RequestMeta meta =
        RequestMeta.builder()
            .procedure("yarpc.test.protobuf.Echo::Unary")
            .encoding("proto")
            .deadline(Deadline.after(5, SECONDS))
            .build();
    YarpcException e =
        YarpcException.from(
            catchThrowable(
                client
                    .clientConfig("echo")
                    .call(Request.of(meta, Body.of(new byte[] {0x0a, 0x05, 'a'})))));
    if (e.response() != null) {
      e.response().body().release();
    }
    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(e.getMessage())
        .startsWith(
            "failed to decode \"proto\" request body for procedure "
                + "\"yarpc.test.protobuf.Echo::Unary\" of service \"echo\" from caller \"client\": ");
  }

  // ---- streaming
  // -----------------------------------------------------------------------------------

  @ParameterizedTest
  @ValueSource(strings = {"proto", "json"})
  void serverStreaming(String encoding) {
    assumeTrue(supportsStreaming(), "transport does not stream");
    Metadata headers = new Metadata();
    headers.put(TRACE, "s-1");
    Iterator<EchoResponse> it =
        blocking(encoding)
            .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers))
            .serverStream(request("many").toBuilder().setCount(20).build());
    List<EchoResponse> all = new ArrayList<>();
    it.forEachRemaining(all::add);

    assertThat(all).hasSize(20);
    assertThat(all)
        .extracting(EchoResponse::getIndex)
        .containsExactlyElementsOf(java.util.stream.IntStream.range(0, 20).boxed().toList());
    assertThat(all.get(0).getHeadersMap())
        .containsEntry("x-trace", "s-1")
        .containsEntry("x-middleware", "stream")
        .containsEntry("context:x-trace", "s-1");
    assertThat(streamMiddlewareCalls).hasValue(1);
  }

  @ParameterizedTest
  @ValueSource(strings = {"proto", "json"})
  void clientStreaming(String encoding) throws Exception {
    assumeTrue(supportsStreaming(), "transport does not stream");
    CompletableFuture<EchoResponse> result = new CompletableFuture<>();
    StreamObserver<EchoRequest> requests =
        EchoGrpc.newStub(channel(encoding))
            .withDeadlineAfter(10, SECONDS)
            .clientStream(observer(result));
    for (String s : List.of("a", "b", "c")) {
      requests.onNext(request(s));
    }
    requests.onCompleted();

    EchoResponse r = result.get(10, SECONDS);
    assertThat(r.getMessage()).isEqualTo("abc");
    assertThat(r.getIndex()).isEqualTo(3);
  }

  @ParameterizedTest
  @ValueSource(strings = {"proto", "json"})
  void bidiStreaming(String encoding) throws Exception {
    assumeTrue(supportsStreaming(), "transport does not stream");
    List<EchoResponse> received = new CopyOnWriteArrayList<>();
    CompletableFuture<Void> done = new CompletableFuture<>();
    StreamObserver<EchoRequest> requests =
        EchoGrpc.newStub(channel(encoding))
            .withDeadlineAfter(10, SECONDS)
            .bidi(
                new StreamObserver<>() {
                  @Override
                  public void onNext(EchoResponse value) {
                    received.add(value);
                  }

                  @Override
                  public void onError(Throwable t) {
                    done.completeExceptionally(t);
                  }

                  @Override
                  public void onCompleted() {
                    done.complete(null);
                  }
                });
    for (int i = 0; i < 50; i++) {
      requests.onNext(request("m" + i));
    }
    requests.onCompleted();
    done.get(10, SECONDS);

    assertThat(received).hasSize(50);
    assertThat(received.get(49).getMessage()).isEqualTo("m49");
    assertThat(received.get(49).getIndex()).isEqualTo(49);
  }

  @Test
  void streamErrorsCarryStatusDetails() {
    assumeTrue(supportsStreaming(), "transport does not stream");
    Iterator<EchoResponse> it = blocking("proto").serverStream(failing("status-details"));
    StatusRuntimeException e = catchStatus(it::next);
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    com.google.rpc.Status st = StatusProto.fromThrowable(e);
    assertThat(st).isNotNull();
    assertThat(st.getDetailsList()).hasSize(2);
  }

  @Test
  void clientCancellationReachesTheHandler() throws Exception {
    assumeTrue(supportsStreaming(), "transport does not stream");
    CountDownLatch first = new CountDownLatch(1);
    CompletableFuture<Throwable> closed = new CompletableFuture<>();
    io.grpc.Context.CancellableContext ctx = io.grpc.Context.current().withCancellation();
    StreamObserver<EchoRequest> requests =
        ctx.call(
            () ->
                EchoGrpc.newStub(channel("proto"))
                    .withDeadlineAfter(10, SECONDS)
                    .bidi(
                        new StreamObserver<>() {
                          @Override
                          public void onNext(EchoResponse value) {
                            first.countDown();
                          }

                          @Override
                          public void onError(Throwable t) {
                            closed.complete(t);
                          }

                          @Override
                          public void onCompleted() {
                            closed.complete(null);
                          }
                        }));
    requests.onNext(request("one"));
    assertThat(first.await(5, SECONDS)).isTrue();
    ctx.cancel(null);

    assertThat(Status.fromThrowable(closed.get(5, SECONDS)).getCode())
        .isEqualTo(Status.Code.CANCELLED);
    assertThat(service.cancelled.await(5, SECONDS)).as("the service saw the cancellation").isTrue();
  }

  // ---- helpers
  // -------------------------------------------------------------------------------------

  static <T> StreamObserver<T> observer(CompletableFuture<T> result) {
    return new StreamObserver<>() {
      @Override
      public void onNext(T value) {
        result.complete(value);
      }

      @Override
      public void onError(Throwable t) {
        result.completeExceptionally(t);
      }

      @Override
      public void onCompleted() {
        result.complete(null);
      }
    };
  }

  interface ThrowingRunnable {
    void run() throws Exception;
  }

  static StatusRuntimeException catchStatus(ThrowingRunnable call) {
    try {
      call.run();
    } catch (StatusRuntimeException e) {
      return e;
    } catch (Exception e) {
      throw new AssertionError("expected a StatusRuntimeException", e);
    }
    throw new AssertionError("expected a StatusRuntimeException");
  }

  static Throwable catchThrowable(CompletableFuture<?> f) {
    try {
      f.get(10, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      return e.getCause();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
    throw new AssertionError("expected the call to fail");
  }
}
