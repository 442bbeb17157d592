package io.yarpc.transport.grpc;

import static io.grpc.health.v1.HealthCheckResponse.ServingStatus.NOT_SERVING;
import static io.grpc.health.v1.HealthCheckResponse.ServingStatus.SERVICE_UNKNOWN;
import static io.grpc.health.v1.HealthCheckResponse.ServingStatus.SERVING;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.ServiceDescriptorProto;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.reflection.v1.ServerReflectionGrpc;
import io.grpc.reflection.v1.ServerReflectionRequest;
import io.grpc.reflection.v1.ServerReflectionResponse;
import io.grpc.reflection.v1.ServiceResponse;
import io.grpc.stub.StreamObserver;
import io.yarpc.Dispatcher;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Response;
import io.yarpc.transport.grpc.testing.echo.EchoGrpc;
import io.yarpc.transport.grpc.testing.echo.EchoRequest;
import io.yarpc.transport.grpc.testing.echo.EchoResponse;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The gRPC inbound's health and reflection services, called by grpc-java's own stubs (from grpc-services)
 * over a plain channel with no YARPC metadata and no deadline: Check and Watch per name and across a
 * dispatcher's drain and an inbound's stop, reflection v1 and v1alpha listing and describing the procedures
 * whose schema is a protobuf file, and both turned off on the builder.
 */
@Timeout(60) // the stubs are called without deadlines, as probes do; this guards against a hang
class HealthAndReflectionTest {
  private static final String NAME = "health-test";
  private static final String ECHO = EchoSupport.SERVICE;

  private GrpcTransport transport;
  private GrpcInbound inbound;
  private Dispatcher dispatcher;
  private ManagedChannel plain; // no rpc-* metadata, like any grpc tool
  private ManagedChannel yarpc; // rpc-caller, rpc-service, rpc-encoding
  private final CountDownLatch blockedEntered = new CountDownLatch(1);
  private final CountDownLatch unblock = new CountDownLatch(1);

  private void start(UnaryOperator<GrpcInbound.Builder> options, List<Procedure> procedures) {
    transport = GrpcTransport.create();
    inbound =
        options.apply(transport.inboundBuilder(new InetSocketAddress("127.0.0.1", 0))).build();
    dispatcher =
        Dispatcher.builder(NAME)
            .inbound(inbound)
            .shutdownGracePeriod(Duration.ofSeconds(20))
            .build();
    dispatcher.register(procedures);
    dispatcher.start();
    plain = NettyChannelBuilder.forAddress("127.0.0.1", inbound.port()).usePlaintext().build();
    yarpc =
        NettyChannelBuilder.forAddress("127.0.0.1", inbound.port())
            .usePlaintext()
            .intercept(
                io.grpc.stub.MetadataUtils.newAttachHeadersInterceptor(
                    EchoSupport.yarpcHeaders("health-test", NAME)))
            .build();
  }

  private void start() {
    start(b -> b, echoProcedures());
  }

  @AfterEach
  void stop() throws Exception {
    unblock.countDown();
    EchoSupport.shutdown(plain);
    EchoSupport.shutdown(yarpc);
    if (dispatcher != null) {
      dispatcher.stop();
    }
    if (transport != null) {
      transport.stop();
      assertThat(transport.receiveStats().outstanding())
          .as("%s", transport.receiveStats())
          .isZero();
    }
  }

  /**
   * Echo::Unary in proto and json, also under the YARPC service "other", with the Echo file as schema; a
   * raw procedure {@code ping} without a schema. A unary request with message "block" waits for the test.
   */
  private List<Procedure> echoProcedures() {
    Object schema = EchoGrpc.getServiceDescriptor().getSchemaDescriptor();
    List<Procedure> list = new ArrayList<>();
    for (String service : new String[] {"", "other"}) {
      for (String encoding : new String[] {"proto", "json"}) {
        list.add(
            Procedure.builder(EchoSupport.UNARY)
                .service(service)
                .encoding(encoding)
                .schema(schema)
                .unary(
                    req -> {
                      EchoRequest r;
                      try {
                        r = EchoSupport.request(req.body());
                      } catch (Exception e) {
                        return CompletableFuture.failedFuture(e);
                      } finally {
                        req.body().release();
                      }
                      if (r.getMessage().equals("block")) {
                        blockedEntered.countDown();
                        return CompletableFuture.supplyAsync(
                            () -> {
                              await(unblock);
                              return Response.of(EchoSupport.body(EchoSupport.resp("unblocked")));
                            });
                      }
                      return CompletableFuture.completedFuture(
                          Response.of(EchoSupport.body(EchoSupport.resp(r.getMessage()))));
                    })
                .build());
      }
    }
    list.add(
        Procedure.builder("ping")
            .unary(
                req -> {
                  req.body().release();
                  return CompletableFuture.completedFuture(
                      Response.of(io.yarpc.transport.Body.empty()));
                })
            .build());
    return list;
  }

  private static void await(CountDownLatch latch) {
    try {
      if (!latch.await(30, TimeUnit.SECONDS)) {
        throw new AssertionError("timed out");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  private ServingStatus check(String service) {
    return HealthGrpc.newBlockingStub(plain)
        .check(HealthCheckRequest.newBuilder().setService(service).build())
        .getStatus();
  }

  /** An open Watch: what it received, in order (a response, then maybe a Status at the end). */
  private static final class Watch implements StreamObserver<HealthCheckResponse> {
    final BlockingQueue<Object> events = new LinkedBlockingQueue<>();

    @Override
    public void onNext(HealthCheckResponse value) {
      events.add(value.getStatus());
    }

    @Override
    public void onError(Throwable t) {
      events.add(Status.fromThrowable(t).getCode());
    }

    @Override
    public void onCompleted() {
      events.add("completed");
    }

    Object next() throws InterruptedException {
      Object e = events.poll(20, TimeUnit.SECONDS);
      assertThat(e).as("a watch event").isNotNull();
      return e;
    }
  }

  private Watch watch(String service) {
    Watch w = new Watch();
    HealthGrpc.newStub(plain).watch(HealthCheckRequest.newBuilder().setService(service).build(), w);
    return w;
  }

  // ---- health ----

  @Test
  void checkAnswersForTheServerTheYarpcServicesAndTheGrpcServicesWithoutMetadataOrDeadline() {
    start();
    assertThat(check("")).isEqualTo(SERVING);
    assertThat(check(NAME)).as("the dispatcher's service").isEqualTo(SERVING);
    assertThat(check("other")).as("another YARPC service with procedures").isEqualTo(SERVING);
    assertThat(check(ECHO)).as("the gRPC service of Echo::Unary").isEqualTo(SERVING);
    for (String unknown :
        new String[] {"nope", "__default__", "yarpc.test.echo", "Unary", "ping"}) {
      StatusRuntimeException e =
          catchThrowableOfType(StatusRuntimeException.class, () -> check(unknown));
      assertThat(e).as(unknown).isNotNull();
      assertThat(e.getStatus().getCode()).as(unknown).isEqualTo(Status.Code.NOT_FOUND);
    }
  }

  @Test
  void watchSeesServingThenNotServingWhenTheDispatcherBeginsToStopWhileCallsInFlightFinish()
      throws Exception {
    start();
    EchoGrpc.EchoBlockingStub echo =
        EchoGrpc.newBlockingStub(yarpc).withDeadlineAfter(30, TimeUnit.SECONDS);
    CompletableFuture<EchoResponse> inFlight =
        CompletableFuture.supplyAsync(() -> echo.unary(EchoSupport.req("block")));
    await(blockedEntered);
    Watch all = watch("");
    Watch echoWatch = watch(ECHO);
    Watch unknown = watch("not.Registered");
    assertThat(all.next()).isEqualTo(SERVING);
    assertThat(echoWatch.next()).isEqualTo(SERVING);
    assertThat(unknown.next()).isEqualTo(SERVICE_UNKNOWN);

    CompletableFuture<Void> stopping = CompletableFuture.runAsync(dispatcher::stop);
    assertThat(all.next()).isEqualTo(NOT_SERVING);
    assertThat(echoWatch.next()).isEqualTo(NOT_SERVING);
    // draining: the server still answers, and says it is not serving; the call in flight is still
    // running
    assertThat(check("")).isEqualTo(NOT_SERVING);
    assertThat(check(ECHO)).isEqualTo(NOT_SERVING);
    assertThat(inFlight).isNotDone();
    assertThat(stopping).isNotDone();
    assertThat(unknown.events).as("an unknown name stays unknown").isEmpty();

    unblock.countDown();
    assertThat(inFlight.get(20, TimeUnit.SECONDS).getMessage()).isEqualTo("unblocked");
    stopping.get(20, TimeUnit.SECONDS);
    // the inbound's stop ends the watches instead of waiting for them
    assertThat(all.next()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(echoWatch.next()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(unknown.next()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(all.events).isEmpty();
  }

  @Test
  void anInboundStoppedOnItsOwnReportsNotServingAndOpenWatchesDoNotHoldUpItsStop()
      throws Exception {
    start(b -> b.gracePeriod(Duration.ofSeconds(20)), echoProcedures());
    Watch all = watch("");
    assertThat(all.next()).isEqualTo(SERVING);
    long began = System.nanoTime();
    inbound.stop();
    assertThat(Duration.ofNanos(System.nanoTime() - began)).isLessThan(Duration.ofSeconds(10));
    assertThat(all.next()).isEqualTo(NOT_SERVING);
    assertThat(all.next()).isEqualTo(Status.Code.UNAVAILABLE);
  }

  @Test
  void servicesRegisteredAfterStartAreCheckedAtOnceAndWatchedFromTheNextChange() throws Exception {
    start(b -> b, List.of());
    StatusRuntimeException e =
        catchThrowableOfType(StatusRuntimeException.class, () -> check(ECHO));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
    Watch late = watch(ECHO);
    assertThat(late.next()).isEqualTo(SERVICE_UNKNOWN);

    dispatcher.register(echoProcedures());
    assertThat(check(ECHO)).isEqualTo(SERVING);
    assertThat(check("other")).isEqualTo(SERVING);
    assertThat(late.events.poll(200, TimeUnit.MILLISECONDS)).as("no change pushed yet").isNull();
    dispatcher.stop();
    assertThat(late.next()).as("the next change reports it").isEqualTo(NOT_SERVING);
    assertThat(late.next()).isEqualTo(Status.Code.UNAVAILABLE);
  }

  // ---- reflection ----

  /** Sends one reflection request on a v1 stream and returns the one response. */
  private ServerReflectionResponse reflectV1(ServerReflectionRequest request) throws Exception {
    CompletableFuture<ServerReflectionResponse> got = new CompletableFuture<>();
    StreamObserver<ServerReflectionRequest> out =
        ServerReflectionGrpc.newStub(plain)
            .serverReflectionInfo(
                new StreamObserver<>() {
                  @Override
                  public void onNext(ServerReflectionResponse value) {
                    got.complete(value);
                  }

                  @Override
                  public void onError(Throwable t) {
                    got.completeExceptionally(t);
                  }

                  @Override
                  public void onCompleted() {
                    got.completeExceptionally(new AssertionError("completed without a response"));
                  }
                });
    out.onNext(request);
    out.onCompleted();
    return got.get(20, TimeUnit.SECONDS);
  }

  private io.grpc.reflection.v1alpha.ServerReflectionResponse reflectV1alpha(
      io.grpc.reflection.v1alpha.ServerReflectionRequest request) throws Exception {
    CompletableFuture<io.grpc.reflection.v1alpha.ServerReflectionResponse> got =
        new CompletableFuture<>();
    StreamObserver<io.grpc.reflection.v1alpha.ServerReflectionRequest> out =
        io.grpc.reflection.v1alpha.ServerReflectionGrpc.newStub(plain)
            .serverReflectionInfo(
                new StreamObserver<>() {
                  @Override
                  public void onNext(io.grpc.reflection.v1alpha.ServerReflectionResponse value) {
                    got.complete(value);
                  }

                  @Override
                  public void onError(Throwable t) {
                    got.completeExceptionally(t);
                  }

                  @Override
                  public void onCompleted() {
                    got.completeExceptionally(new AssertionError("completed without a response"));
                  }
                });
    out.onNext(request);
    out.onCompleted();
    return got.get(20, TimeUnit.SECONDS);
  }

  private List<String> listV1() throws Exception {
    ServerReflectionResponse r =
        reflectV1(ServerReflectionRequest.newBuilder().setListServices("").build());
    assertThat(r.hasErrorResponse()).as("%s", r.getErrorResponse()).isFalse();
    return r.getListServicesResponse().getServiceList().stream()
        .map(ServiceResponse::getName)
        .toList();
  }

  @Test
  void reflectionV1ListsAndDescribesTheProtobufServicesOnce() throws Exception {
    start();
    // Echo is registered under two YARPC services and two encodings: still one service
    assertThat(listV1())
        .containsExactlyInAnyOrder(
            ECHO,
            "grpc.health.v1.Health",
            "grpc.reflection.v1.ServerReflection",
            "grpc.reflection.v1alpha.ServerReflection");

    for (String symbol : new String[] {ECHO, ECHO + ".Unary", "yarpc.test.echo.EchoRequest"}) {
      ServerReflectionResponse r =
          reflectV1(ServerReflectionRequest.newBuilder().setFileContainingSymbol(symbol).build());
      assertThat(r.hasErrorResponse()).as("%s: %s", symbol, r.getErrorResponse()).isFalse();
      FileDescriptorProto file =
          FileDescriptorProto.parseFrom(r.getFileDescriptorResponse().getFileDescriptorProto(0));
      assertThat(file.getName()).isEqualTo("echo.proto");
      assertThat(file.getPackage()).isEqualTo("yarpc.test.echo");
      assertThat(file.getServiceList())
          .extracting(ServiceDescriptorProto::getName)
          .containsExactly("Echo");
      assertThat(file.getService(0).getMethodList())
          .extracting(m -> m.getName())
          .contains("Unary", "ServerStream");
    }
    ServerReflectionResponse byName =
        reflectV1(ServerReflectionRequest.newBuilder().setFileByFilename("echo.proto").build());
    assertThat(
            FileDescriptorProto.parseFrom(
                    byName.getFileDescriptorResponse().getFileDescriptorProto(0))
                .getName())
        .isEqualTo("echo.proto");
    ServerReflectionResponse missing =
        reflectV1(ServerReflectionRequest.newBuilder().setFileContainingSymbol("no.Such").build());
    assertThat(missing.getErrorResponse().getErrorCode()).isEqualTo(Status.Code.NOT_FOUND.value());
  }

  @Test
  void reflectionV1alphaListsAndDescribesToo() throws Exception {
    start();
    io.grpc.reflection.v1alpha.ServerReflectionResponse list =
        reflectV1alpha(
            io.grpc.reflection.v1alpha.ServerReflectionRequest.newBuilder()
                .setListServices("")
                .build());
    assertThat(list.getListServicesResponse().getServiceList())
        .extracting(io.grpc.reflection.v1alpha.ServiceResponse::getName)
        .contains(ECHO, "grpc.health.v1.Health");
    io.grpc.reflection.v1alpha.ServerReflectionResponse file =
        reflectV1alpha(
            io.grpc.reflection.v1alpha.ServerReflectionRequest.newBuilder()
                .setFileContainingSymbol(ECHO)
                .build());
    assertThat(
            FileDescriptorProto.parseFrom(
                    file.getFileDescriptorResponse().getFileDescriptorProto(0))
                .getServiceList())
        .extracting(ServiceDescriptorProto::getName)
        .containsExactly("Echo");
  }

  @Test
  void reflectionListsServicesRegisteredAfterStart() throws Exception {
    start(b -> b, List.of());
    assertThat(listV1()).doesNotContain(ECHO).contains("grpc.health.v1.Health");
    dispatcher.register(echoProcedures());
    assertThat(listV1()).contains(ECHO);
  }

  @Test
  void turnedOffOnTheBuilderTheyAreRoutedLikeAnyPathAndUnimplemented() throws Exception {
    start(b -> b.healthService(false).reflection(false), echoProcedures());
    // with the rpc-* metadata a YARPC client sends, the router answers: no such procedure
    StatusRuntimeException health =
        catchThrowableOfType(
            StatusRuntimeException.class,
            () ->
                HealthGrpc.newBlockingStub(yarpc)
                    .withDeadlineAfter(10, TimeUnit.SECONDS)
                    .check(HealthCheckRequest.getDefaultInstance()));
    assertThat(health.getStatus().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED);
    assertThat(health.getStatus().getDescription()).contains("grpc.health.v1.Health::Check");

    CompletableFuture<Throwable> reflection = new CompletableFuture<>();
    StreamObserver<ServerReflectionRequest> out =
        ServerReflectionGrpc.newStub(yarpc)
            .serverReflectionInfo(
                new StreamObserver<>() {
                  @Override
                  public void onNext(ServerReflectionResponse value) {
                    reflection.completeExceptionally(new AssertionError("a response: " + value));
                  }

                  @Override
                  public void onError(Throwable t) {
                    reflection.complete(t);
                  }

                  @Override
                  public void onCompleted() {
                    reflection.completeExceptionally(new AssertionError("completed"));
                  }
                });
    out.onNext(ServerReflectionRequest.newBuilder().setListServices("").build());
    out.onCompleted();
    assertThat(Status.fromThrowable(reflection.get(20, TimeUnit.SECONDS)).getCode())
        .isEqualTo(Status.Code.UNIMPLEMENTED);
    // the procedures still work
    assertThat(
            EchoGrpc.newBlockingStub(yarpc)
                .withDeadlineAfter(10, TimeUnit.SECONDS)
                .unary(EchoSupport.req("hi"))
                .getMessage())
        .isEqualTo("hi");
  }
}
