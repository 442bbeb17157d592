package io.yarpc.examples.protobuf;

import com.google.protobuf.ByteString;
import com.google.rpc.BadRequest;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.encoding.protobuf.ProtobufErrors;
import io.yarpc.encoding.protobuf.ProtobufProcedures;
import io.yarpc.encoding.protobuf.YarpcChannel;
import io.yarpc.errors.Code;
import io.yarpc.examples.echo.EchoGrpc;
import io.yarpc.examples.echo.EchoMessage;
import io.yarpc.transport.grpc.GrpcInbound;
import io.yarpc.transport.grpc.GrpcTransport;
import io.yarpc.transport.http.HttpInbound;
import io.yarpc.transport.http.HttpTransport;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * A protobuf service and its clients. The service is an ordinary grpc-java service (it extends the
 * generated {@code EchoGrpc.EchoImplBase}); {@link ProtobufProcedures} serves it over every inbound of a
 * dispatcher — here HTTP and gRPC — as the procedure {@code yarpc.examples.echo.Echo::Echo}, in the {@code
 * proto} and {@code json} encodings. Clients are generated stubs: on a {@link YarpcChannel} (any YARPC
 * outbound, here HTTP), or on a plain grpc-java channel (the gRPC inbound speaks standard gRPC).
 *
 * <p>Run: {@code java -cp examples/target/yarpc-examples.jar io.yarpc.examples.protobuf.ProtobufExample}
 */
public final class ProtobufExample {
  private ProtobufExample() {}

  /** The service: echoes its request, and rejects an empty token with a {@code BadRequest} detail. */
  static final class EchoImpl extends EchoGrpc.EchoImplBase {
    @Override
    public void echo(EchoMessage request, StreamObserver<EchoMessage> response) {
      if (request.getToken().isEmpty()) {
        response.onError(
            ProtobufErrors.newError(
                Code.INVALID_ARGUMENT,
                "token is required",
                BadRequest.newBuilder()
                    .addFieldViolations(
                        BadRequest.FieldViolation.newBuilder()
                            .setField("token")
                            .setDescription("must not be empty"))
                    .build()));
        return;
      }
      response.onNext(request);
      response.onCompleted();
    }
  }

  /** Starts the service, calls it three ways, prints what came back. */
  public static void main(String[] args) throws InterruptedException {
    run();
  }

  /** The example; returns the token the plain gRPC client got back (for tests). */
  public static String run() throws InterruptedException {
    HttpTransport http = HttpTransport.create();
    GrpcTransport grpc = GrpcTransport.create();
    HttpInbound httpInbound = http.inbound();
    GrpcInbound grpcInbound = grpc.inbound(new InetSocketAddress("127.0.0.1", 0));
    Dispatcher server = Dispatcher.builder("echo").inbound(httpInbound, grpcInbound).build();
    server.register(ProtobufProcedures.of(new EchoImpl()));
    server.start();

    HttpTransport clientHttp = HttpTransport.create();
    Dispatcher client =
        Dispatcher.builder("echo-client")
            .outbound("echo", Outbounds.unary(clientHttp.singleOutbound(httpInbound.hostPort())))
            .build();
    client.start();
    ManagedChannel plainGrpc =
        NettyChannelBuilder.forAddress("127.0.0.1", grpcInbound.port()).usePlaintext().build();
    try {
      EchoMessage hello =
          EchoMessage.newBuilder()
              .setPayload(ByteString.copyFromUtf8("hello"))
              .setToken("t-1")
              .build();

      // 1. A generated stub over YARPC (HTTP here); the deadline becomes the YARPC call's deadline.
      EchoGrpc.EchoBlockingStub overYarpc =
          EchoGrpc.newBlockingStub(YarpcChannel.of(client.clientConfig("echo")))
              .withDeadlineAfter(1, TimeUnit.SECONDS);
      System.out.println(
          "stub over YARPC HTTP -> " + overYarpc.echo(hello).getPayload().toStringUtf8());

      // 2. The same stub, the request in proto3 JSON instead of binary.
      EchoGrpc.EchoBlockingStub json =
          EchoGrpc.newBlockingStub(YarpcChannel.of(client.clientConfig("echo"), "json"))
              .withDeadlineAfter(1, TimeUnit.SECONDS);
      System.out.println("stub, json encoding  -> " + json.echo(hello).getToken());

      // 3. Errors keep their code, message and google.rpc.Status details.
      try {
        overYarpc.echo(hello.toBuilder().clearToken().build());
      } catch (StatusRuntimeException e) {
        com.google.rpc.Status status = StatusProto.fromThrowable(e);
        System.out.println(
            "empty token          -> "
                + e.getStatus().getCode()
                + ": "
                + status.getMessage()
                + ", details: "
                + status.getDetailsList().get(0).getTypeUrl());
      }

      // 4. A plain grpc-java client calling the gRPC inbound: standard gRPC on the wire. As with
      // yarpc-go,
      //    it names itself, the service it calls and the encoding in rpc-caller, rpc-service and
      //    rpc-encoding metadata (grpc-java's content-type, application/grpc, names no encoding).
      Metadata yarpcHeaders = new Metadata();
      yarpcHeaders.put(
          Metadata.Key.of("rpc-caller", Metadata.ASCII_STRING_MARSHALLER), "plain-grpc-client");
      yarpcHeaders.put(Metadata.Key.of("rpc-service", Metadata.ASCII_STRING_MARSHALLER), "echo");
      yarpcHeaders.put(Metadata.Key.of("rpc-encoding", Metadata.ASCII_STRING_MARSHALLER), "proto");
      EchoMessage answer =
          EchoGrpc.newBlockingStub(plainGrpc)
              .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(yarpcHeaders))
              .withDeadlineAfter(1, TimeUnit.SECONDS)
              .echo(hello.toBuilder().setToken("t-2").build());
      System.out.println("plain grpc-java      -> " + answer.getToken());
      return answer.getToken();
    } finally {
      plainGrpc.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      client.stop();
      server.stop();
    }
  }
}
