package io.yarpc.examples;

import static io.grpc.health.v1.HealthCheckResponse.ServingStatus.NOT_SERVING;
import static io.grpc.health.v1.HealthCheckResponse.ServingStatus.SERVING;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.MethodDescriptorProto;
import com.google.protobuf.DescriptorProtos.ServiceDescriptorProto;
import com.google.protobuf.Descriptors;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.util.JsonFormat;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.reflection.v1.ServerReflectionGrpc;
import io.grpc.reflection.v1.ServerReflectionRequest;
import io.grpc.reflection.v1.ServerReflectionResponse;
import io.grpc.reflection.v1.ServiceResponse;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Health and reflection of the {@code serve} dispatcher, as tools this project did not write use them:
 * grpc-java's health and reflection stubs (from grpc-services) over a plain channel with no YARPC metadata
 * and no deadline; a grpcurl-style call built only from what reflection returned; HTTP's {@code /health}
 * through the JDK's HTTP client; python grpcio's health check (skipped where grpcio is not installed). The
 * drain is made observable with a {@code sleep/raw} call in flight.
 */
@Timeout(120)
class HealthAndReflectionTest {
  private static final String KEYVALUE = "yarpc.examples.keyvalue.KeyValue";
  private static final String ECHO = "yarpc.examples.echo.Echo";

  private Serve serve;
  private ManagedChannel plain;
  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @BeforeEach
  void start() {
    serve = Serve.start("127.0.0.1", 0, 0, 0);
    plain = NettyChannelBuilder.forAddress(serve.grpcAddress()).usePlaintext().build();
  }

  @AfterEach
  void stop() throws Exception {
    plain.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    serve.close();
  }

  private HealthCheckResponse.ServingStatus check(String service) {
    return HealthGrpc.newBlockingStub(plain)
        .check(HealthCheckRequest.newBuilder().setService(service).build())
        .getStatus();
  }

  private ServerReflectionResponse reflect(ServerReflectionRequest request) throws Exception {
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

  private HttpResponse<String> getHealth() throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://" + serve.peers().get("http") + "/health"))
            .timeout(Duration.ofSeconds(10))
            .GET()
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void grpcJavaHealthStubChecksTheServerAndEveryExampleService() {
    assertThat(check("")).isEqualTo(SERVING);
    assertThat(check(Serve.SERVICE)).isEqualTo(SERVING);
    assertThat(check(KEYVALUE)).isEqualTo(SERVING);
    assertThat(check(ECHO)).isEqualTo(SERVING);
    StatusRuntimeException unknown =
        catchThrowableOfType(StatusRuntimeException.class, () -> check("yarpc.examples.Nope"));
    assertThat(unknown.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
  }

  @Test
  void reflectionListsDescribesAndLetsAToolCallTheExampleServices() throws Exception {
    ServerReflectionResponse list =
        reflect(ServerReflectionRequest.newBuilder().setListServices("").build());
    assertThat(list.getListServicesResponse().getServiceList())
        .extracting(ServiceResponse::getName)
        .containsExactlyInAnyOrder(
            KEYVALUE,
            ECHO,
            "grpc.health.v1.Health",
            "grpc.reflection.v1.ServerReflection",
            "grpc.reflection.v1alpha.ServerReflection");

    // describe, as `grpcurl describe yarpc.examples.keyvalue.KeyValue` does
    ServerReflectionResponse file =
        reflect(ServerReflectionRequest.newBuilder().setFileContainingSymbol(KEYVALUE).build());
    assertThat(file.getFileDescriptorResponse().getFileDescriptorProtoCount()).isEqualTo(1);
    FileDescriptorProto proto =
        FileDescriptorProto.parseFrom(file.getFileDescriptorResponse().getFileDescriptorProto(0));
    assertThat(proto.getName()).isEqualTo("yarpc/examples/keyvalue.proto");
    assertThat(proto.getServiceList())
        .extracting(ServiceDescriptorProto::getName)
        .containsExactly("KeyValue");
    assertThat(proto.getService(0).getMethodList())
        .extracting(MethodDescriptorProto::getName)
        .containsExactly("GetValue", "SetValue", "Watch");
    assertThat(proto.getService(0).getMethod(2).getServerStreaming()).isTrue();

    // call, as grpcurl does: messages built from the reflected descriptors only (no generated
    // classes); the rpc-* metadata and the deadline are what yarpc's gRPC inbound asks of any
    // caller today
    Descriptors.FileDescriptor fd =
        Descriptors.FileDescriptor.buildFrom(proto, new Descriptors.FileDescriptor[0]);
    Descriptors.ServiceDescriptor kv = fd.findServiceByName("KeyValue");
    Metadata md = new Metadata();
    md.put(Metadata.Key.of("rpc-caller", Metadata.ASCII_STRING_MARSHALLER), "reflection-client");
    md.put(Metadata.Key.of("rpc-service", Metadata.ASCII_STRING_MARSHALLER), Serve.SERVICE);
    md.put(Metadata.Key.of("rpc-encoding", Metadata.ASCII_STRING_MARSHALLER), "proto");
    io.grpc.Channel withHeaders =
        io.grpc.ClientInterceptors.intercept(plain, MetadataUtils.newAttachHeadersInterceptor(md));
    assertThat(
            JsonFormat.printer()
                .omittingInsignificantWhitespace()
                .print(
                    dynamicCall(
                        withHeaders,
                        kv.findMethodByName("SetValue"),
                        "{\"key\":\"greeting\",\"value\":\"hi\"}")))
        .isEqualTo("{}");
    assertThat(
            JsonFormat.printer()
                .omittingInsignificantWhitespace()
                .print(
                    dynamicCall(
                        withHeaders, kv.findMethodByName("GetValue"), "{\"key\":\"greeting\"}")))
        .isEqualTo("{\"value\":\"hi\"}");
  }

  private static DynamicMessage dynamicCall(
      io.grpc.Channel channel, Descriptors.MethodDescriptor method, String json) throws Exception {
    DynamicMessage.Builder request = DynamicMessage.newBuilder(method.getInputType());
    JsonFormat.parser().merge(json, request);
    MethodDescriptor<DynamicMessage, DynamicMessage> md =
        MethodDescriptor.<DynamicMessage, DynamicMessage>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(
                MethodDescriptor.generateFullMethodName(
                    method.getService().getFullName(), method.getName()))
            .setRequestMarshaller(
                ProtoUtils.marshaller(DynamicMessage.getDefaultInstance(method.getInputType())))
            .setResponseMarshaller(
                ProtoUtils.marshaller(DynamicMessage.getDefaultInstance(method.getOutputType())))
            .build();
    return ClientCalls.blockingUnaryCall(
        channel, md, CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), request.build());
  }

  @Test
  void reflectionV1alphaListsThemToo() throws Exception {
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
                  public void onCompleted() {}
                });
    out.onNext(
        io.grpc.reflection.v1alpha.ServerReflectionRequest.newBuilder()
            .setListServices("")
            .build());
    out.onCompleted();
    assertThat(got.get(20, TimeUnit.SECONDS).getListServicesResponse().getServiceList())
        .extracting(io.grpc.reflection.v1alpha.ServiceResponse::getName)
        .contains(KEYVALUE, ECHO);
  }

  @Test
  void healthTurnsNotServingOnGrpcAndHttpWhenTheDispatcherBeginsToStop() throws Exception {
    HttpResponse<String> ok = getHealth();
    assertThat(ok.statusCode()).isEqualTo(200);
    assertThat(ok.body()).isEqualTo("SERVING\n");

    BlockingQueue<Object> watched = new LinkedBlockingQueue<>();
    HealthGrpc.newStub(plain)
        .watch(
            HealthCheckRequest.newBuilder().setService(KEYVALUE).build(),
            new StreamObserver<>() {
              @Override
              public void onNext(HealthCheckResponse value) {
                watched.add(value.getStatus());
              }

              @Override
              public void onError(Throwable t) {
                watched.add(Status.fromThrowable(t).getCode());
              }

              @Override
              public void onCompleted() {
                watched.add("completed");
              }
            });
    assertThat(watched.poll(20, TimeUnit.SECONDS)).isEqualTo(SERVING);

    // a call in flight keeps the dispatcher draining for a while
    CompletableFuture<HttpResponse<String>> sleeping =
        http.sendAsync(
            HttpRequest.newBuilder(URI.create("http://" + serve.peers().get("http") + "/"))
                .header("Rpc-Caller", "health-test")
                .header("Rpc-Service", Serve.SERVICE)
                .header("Rpc-Procedure", "sleep/raw")
                .header("Rpc-Encoding", "raw")
                .header("Context-TTL-MS", "20000")
                .POST(HttpRequest.BodyPublishers.ofString("3000"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    for (int i = 0; i < 1000 && serve.dispatcher().inFlightCalls() == 0; i++) {
      Thread.sleep(5);
    }
    assertThat(serve.dispatcher().inFlightCalls()).isEqualTo(1);

    CompletableFuture<Void> stopping = CompletableFuture.runAsync(serve::close);
    assertThat(watched.poll(20, TimeUnit.SECONDS)).isEqualTo(NOT_SERVING);
    assertThat(check("")).isEqualTo(NOT_SERVING);
    HttpResponse<String> draining = getHealth();
    assertThat(draining.statusCode()).isEqualTo(503);
    assertThat(draining.body()).isEqualTo("NOT_SERVING\n");
    assertThat(sleeping).as("the call in flight is still running").isNotDone();

    assertThat(sleeping.get(30, TimeUnit.SECONDS).body()).isEqualTo("3000");
    stopping.get(30, TimeUnit.SECONDS);
    assertThat(watched.poll(20, TimeUnit.SECONDS)).isEqualTo(Status.Code.UNAVAILABLE);
  }

  /**
   * Python grpcio's view. Debian packages grpcio (1.51) but not its health module ({@code grpc_health} is
   * only on PyPI, as grpcio-health-checking), so the script sends the two-field HealthCheckRequest as raw
   * bytes and reads the status byte of the response: the wire the health protocol defines.
   */
  @Test
  void pythonGrpcioChecksHealth() throws Exception {
    if (System.getenv("YARPC_REQUIRE_PEERS")
        != null) { // .ci/run installs it: a missing peer fails there
      assertThat(pythonGrpcio())
          .as("/usr/bin/python3 with grpcio (apt-get install python3-grpcio)")
          .isTrue();
    }
    assumeTrue(pythonGrpcio(), "/usr/bin/python3 with grpcio is not installed");
    String script =
        String.join(
            "\n",
            "import sys, grpc",
            "names = {1: 'SERVING', 2: 'NOT_SERVING', 3: 'SERVICE_UNKNOWN'}",
            "channel = grpc.insecure_channel(sys.argv[1], options=[('grpc.enable_http_proxy', 0)])",
            "check = channel.unary_unary('/grpc.health.v1.Health/Check')",
            "for service in sys.argv[2:]:",
            "    b = service.encode()",
            "    assert len(b) < 128",
            "    request = bytes([0x0a, len(b)]) + b if b else b''",
            "    try:",
            "        response = check(request, timeout=10)",
            "        status = response[1] if len(response) == 2 and response[0] == 0x08 else 0",
            "        print(repr(service), names.get(status, 'UNKNOWN'))",
            "    except grpc.RpcError as e:",
            "        print(repr(service), e.code().name)");
    Process p =
        new ProcessBuilder(
                "/usr/bin/python3",
                "-c",
                script,
                serve.peers().get("grpc"),
                "",
                KEYVALUE,
                Serve.SERVICE,
                "nope")
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    assertThat(out.lines().toList())
        .containsExactly(
            "'' SERVING",
            "'" + KEYVALUE + "' SERVING",
            "'" + Serve.SERVICE + "' SERVING",
            "'nope' NOT_FOUND");
  }

  private static boolean pythonGrpcio() {
    try {
      Process p =
          new ProcessBuilder("/usr/bin/python3", "-c", "import grpc")
              .redirectErrorStream(true)
              .start();
      p.getInputStream().readAllBytes();
      return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
    } catch (Exception e) {
      return false;
    }
  }
}
