package io.yarpc.transport.grpc;

import static io.yarpc.transport.grpc.EchoSupport.BIDI;
import static io.yarpc.transport.grpc.EchoSupport.CLIENT_STREAM;
import static io.yarpc.transport.grpc.EchoSupport.SERVER_STREAM;
import static io.yarpc.transport.grpc.EchoSupport.UNARY;
import static io.yarpc.transport.grpc.EchoSupport.WAIT_SECONDS;
import static io.yarpc.transport.grpc.EchoSupport.body;
import static io.yarpc.transport.grpc.EchoSupport.req;
import static io.yarpc.transport.grpc.EchoSupport.resp;
import static io.yarpc.transport.grpc.EchoSupport.response;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.rpc.ErrorInfo;
import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.StreamObserver;
import io.yarpc.ClientConfig;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.ClientStream;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Headers;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.StreamMessage;
import io.yarpc.transport.grpc.testing.echo.EchoGrpc;
import io.yarpc.transport.grpc.testing.echo.EchoRequest;
import io.yarpc.transport.grpc.testing.echo.EchoResponse;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Interop, direction 2: the YARPC gRPC outbound calls a stock grpc-java server (a generated
 * {@code EchoImplBase}, no YARPC on its side) in all four shapes; errors with {@code google.rpc.Status}
 * details come back intact; the client-side checks of the response trailers (service mismatch,
 * multi-valued metadata) and of the request (reserved and malformed headers).
 */
class PlainServerInteropTest {
  private static final String REMOTE = "plain-echo";

  private Server server;
  private GrpcTransport transport;
  private Dispatcher dispatcher;
  private final AtomicReference<Metadata> seenHeaders = new AtomicReference<>();
  private final AtomicReference<Metadata> extraTrailers = new AtomicReference<>();

  @BeforeEach
  void start() throws Exception {
    ServerInterceptor capture =
        new ServerInterceptor() {
          @Override
          public <Q, R> ServerCall.Listener<Q> interceptCall(
              ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
            seenHeaders.set(headers);
            return next.startCall(
                new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
                  @Override
                  public void sendHeaders(Metadata responseHeaders) {
                    // plain gRPC servers send their metadata in the response headers
                    responseHeaders.put(
                        Metadata.Key.of("x-plain", Metadata.ASCII_STRING_MARSHALLER),
                        call.getMethodDescriptor().getBareMethodName().equals("ServerStream")
                            ? "stream-header"
                            : "from-server");
                    super.sendHeaders(responseHeaders);
                  }

                  @Override
                  public void close(Status status, Metadata trailers) {
                    Metadata extra = extraTrailers.get();
                    if (extra != null) {
                      trailers.merge(extra);
                    }
                    super.close(status, trailers);
                  }
                },
                headers);
          }
        };
    server =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .addService(ServerInterceptors.intercept(new PlainEcho(), capture))
            .build()
            .start();
    transport = GrpcTransport.create();
    GrpcOutbound outbound = transport.singleOutbound("127.0.0.1:" + server.getPort());
    dispatcher =
        Dispatcher.builder("yarpc-client")
            .outbound(REMOTE, Outbounds.builder().unary(outbound).stream(outbound).build())
            .build();
    dispatcher.start();
  }

  @AfterEach
  void stop() throws Exception {
    dispatcher.stop();
    server.shutdownNow().awaitTermination(WAIT_SECONDS, TimeUnit.SECONDS);
    assertThat(transport.receiveStats().outstanding()).as("%s", transport.receiveStats()).isZero();
  }

  private ClientConfig client() {
    return dispatcher.clientConfig(REMOTE);
  }

  private static RequestMeta meta(String procedure) {
    return RequestMeta.builder()
        .procedure(procedure)
        .encoding("proto")
        .deadline(Deadline.after(Duration.ofSeconds(WAIT_SECONDS)))
        .build();
  }

  private static <T> T await(CompletableFuture<T> f) throws Exception {
    return f.get(WAIT_SECONDS, TimeUnit.SECONDS);
  }

  private static YarpcException failure(CompletableFuture<?> f) throws Exception {
    try {
      Object value = f.get(WAIT_SECONDS, TimeUnit.SECONDS);
      if (value instanceof Response) {
        ((Response) value).body().release();
      }
      throw new AssertionError("expected a failure, got " + value);
    } catch (ExecutionException e) {
      assertThat(e.getCause()).isInstanceOf(YarpcException.class);
      return (YarpcException) e.getCause();
    }
  }

  @Test
  void unary() throws Exception {
    RequestMeta meta =
        meta(UNARY).toBuilder()
            .headers(Headers.of("X-Custom", "Value-1"))
            .shardKey("shard")
            .build();
    Response r = await(client().call(Request.of(meta, body(req("hi")))));
    try {
      assertThat(response(r.body()).getMessage()).isEqualTo("plain: hi");
      assertThat(r.headers().get("x-plain")).isEqualTo("from-server");
      assertThat(r.isApplicationError()).isFalse();
    } finally {
      r.body().release();
    }
    Metadata h = seenHeaders.get();
    assertThat(get(h, "rpc-caller")).isEqualTo("yarpc-client");
    assertThat(get(h, "rpc-service")).isEqualTo(REMOTE);
    assertThat(get(h, "rpc-encoding")).isEqualTo("proto");
    assertThat(get(h, "rpc-shard-key")).isEqualTo("shard");
    assertThat(get(h, "x-custom")).isEqualTo("Value-1");
    assertThat(get(h, "grpc-timeout")).isNotNull();
    assertThat(get(h, "user-agent")).startsWith("yarpc-java");
  }

  @Test
  void clientStreaming() throws Exception {
    ClientStream stream = await(client().callStream(meta(CLIENT_STREAM)));
    for (String m : List.of("x", "y", "z")) {
      await(stream.send(StreamMessage.of(body(req(m)))));
    }
    stream.halfClose();
    StreamMessage m = await(stream.receive());
    try {
      assertThat(response(m.body()).getMessage()).isEqualTo("x,y,z");
    } finally {
      m.release();
    }
    assertThat(await(stream.receive())).isNull();
  }

  @Test
  void serverStreaming() throws Exception {
    ClientStream stream = await(client().callStream(meta(SERVER_STREAM)));
    await(stream.send(StreamMessage.of(body(req("4")))));
    stream.halfClose();
    assertThat(await(stream.headers()).get("x-plain")).isEqualTo("stream-header");
    for (int i = 0; i < 4; i++) {
      StreamMessage m = await(stream.receive());
      try {
        assertThat(response(m.body())).isEqualTo(resp("4#" + i));
      } finally {
        m.release();
      }
    }
    assertThat(await(stream.receive())).isNull();
  }

  @Test
  void bidiStreaming() throws Exception {
    ClientStream stream = await(client().callStream(meta(BIDI)));
    for (int i = 0; i < 10; i++) {
      await(stream.send(StreamMessage.of(body(req("b" + i)))));
      StreamMessage m = await(stream.receive());
      try {
        assertThat(response(m.body()).getMessage()).isEqualTo("plain bidi: b" + i);
      } finally {
        m.release();
      }
    }
    stream.halfClose();
    assertThat(await(stream.receive())).isNull();
  }

  @Test
  void errorDetailsReachYarpc() throws Exception {
    YarpcException e = failure(client().call(Request.of(meta(UNARY), body(req("fail")))));
    assertThat(e.code()).isEqualTo(Code.FAILED_PRECONDITION);
    assertThat(e.getMessage()).isEqualTo("precondition failed");
    assertThat(e.details()).isNotNull();
    com.google.rpc.Status status = com.google.rpc.Status.parseFrom(e.details());
    assertThat(status).isEqualTo(EchoSupport.errorStatus());
    assertThat(status.getDetails(0).unpack(ErrorInfo.class).getReason()).isEqualTo("TEST_REASON");
  }

  @Test
  void streamErrorDetailsReachYarpc() throws Exception {
    ClientStream stream = await(client().callStream(meta(SERVER_STREAM)));
    await(stream.send(StreamMessage.of(body(req("fail")))));
    stream.halfClose();
    YarpcException e = failure(stream.receive());
    assertThat(e.code()).isEqualTo(Code.FAILED_PRECONDITION);
    assertThat(com.google.rpc.Status.parseFrom(e.details())).isEqualTo(EchoSupport.errorStatus());
  }

  @Test
  void plainStatusWithoutDetails() throws Exception {
    YarpcException e = failure(client().call(Request.of(meta(UNARY), body(req("not-found")))));
    assertThat(e.code()).isEqualTo(Code.NOT_FOUND);
    assertThat(e.getMessage()).isEqualTo("no such thing");
    assertThat(e.details()).isNull();
    assertThat(e.name()).isNull();
  }

  @Test
  void errorNameTrailerIsStrippedFromMessage() throws Exception {
    Metadata extra = new Metadata();
    extra.put(Metadata.Key.of("rpc-error-name", Metadata.ASCII_STRING_MARSHALLER), "Gone");
    extraTrailers.set(extra);
    YarpcException e = failure(client().call(Request.of(meta(UNARY), body(req("named")))));
    assertThat(e.code()).isEqualTo(Code.NOT_FOUND);
    assertThat(e.name()).isEqualTo("Gone");
    assertThat(e.getMessage()).isEqualTo("it is gone");
  }

  @Test
  void responseFromAnotherServiceIsInternal() throws Exception {
    Metadata extra = new Metadata();
    extra.put(Metadata.Key.of("rpc-service", Metadata.ASCII_STRING_MARSHALLER), "someone-else");
    extraTrailers.set(extra);
    YarpcException e = failure(client().call(Request.of(meta(UNARY), body(req("hi")))));
    assertThat(e.code()).isEqualTo(Code.INTERNAL);
    assertThat(e.getMessage())
        .isEqualTo(
            "service name sent from the request does not match the service name "
                + "received in the response, sent \"plain-echo\", got: \"someone-else\"");
  }

  @Test
  void matchingServiceTrailerIsAccepted() throws Exception {
    Metadata extra = new Metadata();
    extra.put(Metadata.Key.of("rpc-service", Metadata.ASCII_STRING_MARSHALLER), REMOTE);
    extraTrailers.set(extra);
    Response r = await(client().call(Request.of(meta(UNARY), body(req("hi")))));
    r.body().release();
    assertThat(r.headers().contains("rpc-service")).isFalse();
  }

  @Test
  void multiValuedResponseMetadataIsInvalidArgument() throws Exception {
    Metadata extra = new Metadata();
    Metadata.Key<String> key = Metadata.Key.of("x-twice", Metadata.ASCII_STRING_MARSHALLER);
    extra.put(key, "1");
    extra.put(key, "2");
    extraTrailers.set(extra);
    YarpcException e = failure(client().call(Request.of(meta(UNARY), body(req("hi")))));
    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(e.getMessage()).startsWith("header has more than one value: x-twice");
  }

  @Test
  void applicationErrorTrailersBecomeResponseFlags() throws Exception {
    Metadata extra = new Metadata();
    extra.put(Metadata.Key.of("rpc-application-error", Metadata.ASCII_STRING_MARSHALLER), "error");
    extra.put(
        Metadata.Key.of("rpc-application-error-name", Metadata.ASCII_STRING_MARSHALLER), "Oops");
    extra.put(
        Metadata.Key.of("rpc-application-error-details", Metadata.ASCII_STRING_MARSHALLER), "d");
    extraTrailers.set(extra);
    Response r = await(client().call(Request.of(meta(UNARY), body(req("hi")))));
    r.body().release();
    assertThat(r.isApplicationError()).isTrue();
    assertThat(r.applicationErrorMeta().name()).isEqualTo("Oops");
    assertThat(r.applicationErrorMeta().details()).isEqualTo("d");
    assertThat(r.applicationErrorMeta().code()).isNull();
  }

  @Test
  void reservedApplicationHeaderIsRefused() throws Exception {
    Body request = body(req("hi"));
    RequestMeta meta = meta(UNARY).toBuilder().headers(Headers.of("Rpc-Foo", "x")).build();
    YarpcException e = failure(client().call(Request.of(meta, request)));
    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(e.getMessage())
        .isEqualTo("cannot use reserved header in application headers: rpc-foo");
    assertThat(request.isReleased()).as("the outbound released the request body").isTrue();
    assertThat(seenHeaders.get()).as("nothing reached the server").isNull();
  }

  @Test
  void headerValueWithNewlineIsRefused() throws Exception {
    RequestMeta meta = meta(UNARY).toBuilder().headers(Headers.of("x-bad", "a\nb")).build();
    YarpcException e = failure(client().call(Request.of(meta, body(req("hi")))));
    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(e.getMessage())
        .isEqualTo(
            "grpc request header value contains invalid characters including ASCII 0xd, 0xa, or 0x0");
  }

  @Test
  void reservedStreamHeaderIsRefused() throws Exception {
    RequestMeta meta = meta(BIDI).toBuilder().headers(Headers.of("rpc-x", "1")).build();
    YarpcException e = failure(client().callStream(meta));
    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
  }

  private static String get(Metadata md, String key) {
    return md.get(Metadata.Key.of(key, Metadata.ASCII_STRING_MARSHALLER));
  }

  /** A stock generated service: no YARPC at all. */
  private static final class PlainEcho extends EchoGrpc.EchoImplBase {
    @Override
    public void unary(EchoRequest request, StreamObserver<EchoResponse> out) {
      switch (request.getMessage()) {
        case "fail":
          out.onError(StatusProto.toStatusRuntimeException(EchoSupport.errorStatus()));
          return;
        case "not-found":
          out.onError(Status.NOT_FOUND.withDescription("no such thing").asRuntimeException());
          return;
        case "named":
          out.onError(Status.NOT_FOUND.withDescription("Gone: it is gone").asRuntimeException());
          return;
        default:
          out.onNext(resp("plain: " + request.getMessage()));
          out.onCompleted();
      }
    }

    @Override
    public StreamObserver<EchoRequest> clientStream(StreamObserver<EchoResponse> out) {
      List<String> got = new ArrayList<>();
      return new StreamObserver<>() {
        @Override
        public void onNext(EchoRequest value) {
          got.add(value.getMessage());
        }

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {
          out.onNext(resp(String.join(",", got)));
          out.onCompleted();
        }
      };
    }

    @Override
    public void serverStream(EchoRequest request, StreamObserver<EchoResponse> out) {
      if (request.getMessage().equals("fail")) {
        out.onError(StatusProto.toStatusRuntimeException(EchoSupport.errorStatus()));
        return;
      }
      int n = Integer.parseInt(request.getMessage());
      for (int i = 0; i < n; i++) {
        out.onNext(resp(n + "#" + i));
      }
      out.onCompleted();
    }

    @Override
    public StreamObserver<EchoRequest> bidi(StreamObserver<EchoResponse> out) {
      return new StreamObserver<>() {
        @Override
        public void onNext(EchoRequest value) {
          out.onNext(resp("plain bidi: " + value.getMessage()));
        }

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {
          out.onCompleted();
        }
      };
    }
  }
}
