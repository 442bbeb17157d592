package io.yarpc.encoding.protobuf;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.rpc.BadRequest;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.MetadataUtils;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.encoding.protobuf.testing.EchoGrpc;
import io.yarpc.encoding.protobuf.testing.EchoRequest;
import io.yarpc.encoding.protobuf.testing.EchoResponse;
import io.yarpc.transport.grpc.GrpcInbound;
import io.yarpc.transport.grpc.GrpcOutbound;
import io.yarpc.transport.grpc.GrpcTransport;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Wire compatibility with plain gRPC, both directions: a stock grpc-java client (grpc-netty, no YARPC)
 * calls the generated service served through {@link ProtobufProcedures} on YARPC's gRPC inbound; and
 * generated stubs on a {@link YarpcChannel} over YARPC's gRPC outbound call the same service implementation
 * bound to a stock grpc-java server. Error details cross both ways as {@code grpc-status-details-bin}.
 */
class PlainGrpcInteropTest {
  private static EchoRequest failing(String how) {
    return EchoRequest.newBuilder().setFail(how).build();
  }

  /**
   * A stock grpc-java stub (no YARPC metadata, no deadline) calls a grpc-java service hosted through
   * {@link ProtobufProcedures} behind a {@code ServerInterceptor}: what the interceptor sends as headers and
   * trailers arrives as headers and trailers, binary values intact, and the service's {@code
   * setCompression("gzip")} is honoured.
   */
  @Test
  void interceptorMetadataAndCompressionReachAPlainStub() throws Exception {
    GrpcTransport transport = GrpcTransport.create();
    GrpcInbound inbound = transport.inbound(new InetSocketAddress("127.0.0.1", 0));
    Dispatcher server = Dispatcher.builder("echo").inbound(inbound).build();
    server.register(
        ProtobufProcedures.of(
            io.grpc.ServerInterceptors.intercept(
                new EchoService(), new MetadataEchoInterceptor())));
    server.start();
    ManagedChannel channel =
        NettyChannelBuilder.forAddress("127.0.0.1", inbound.port()).usePlaintext().build();
    try {
      Metadata headers = new Metadata();
      headers.put(MetadataEchoInterceptor.ASCII, "Plain-Echo");
      headers.put(MetadataEchoInterceptor.BIN, EndToEndTestBase.BINARY);
      headers.put(MetadataEchoInterceptor.COMPRESS, "gzip");
      java.util.concurrent.atomic.AtomicReference<Metadata> responseHeaders =
          new java.util.concurrent.atomic.AtomicReference<>();
      java.util.concurrent.atomic.AtomicReference<Metadata> trailers =
          new java.util.concurrent.atomic.AtomicReference<>();
      EchoResponse r =
          EchoGrpc.newBlockingStub(channel)
              .withInterceptors(
                  MetadataUtils.newAttachHeadersInterceptor(headers),
                  MetadataUtils.newCaptureMetadataInterceptor(responseHeaders, trailers))
              .unary(EndToEndTestBase.request("plain"));

      assertThat(r.getMessage()).isEqualTo("plain");
      assertThat(responseHeaders.get().get(MetadataEchoInterceptor.ASCII)).isEqualTo("Plain-Echo");
      assertThat(responseHeaders.get().get(MetadataEchoInterceptor.BIN))
          .containsExactly(EndToEndTestBase.BINARY);
      assertThat(
              responseHeaders
                  .get()
                  .get(Metadata.Key.of("grpc-encoding", Metadata.ASCII_STRING_MARSHALLER)))
          .as("the response was gzip-compressed")
          .isEqualTo("gzip");
      assertThat(trailers.get().get(MetadataEchoInterceptor.BIN))
          .containsExactly(EndToEndTestBase.BINARY);
      assertThat(trailers.get().get(MetadataEchoInterceptor.ASCII))
          .as("only in the headers")
          .isNull();
      assertThat(trailers.get().get(EndToEndTestBase.ECHOED_BY)).isEqualTo("echo-service");

      // the same on a stream: headers, trailers and compression
      responseHeaders.set(null);
      trailers.set(null);
      java.util.Iterator<EchoResponse> it =
          EchoGrpc.newBlockingStub(channel)
              .withInterceptors(
                  MetadataUtils.newAttachHeadersInterceptor(headers),
                  MetadataUtils.newCaptureMetadataInterceptor(responseHeaders, trailers))
              .serverStream(EndToEndTestBase.request("s").toBuilder().setCount(2).build());
      List<EchoResponse> all = new ArrayList<>();
      it.forEachRemaining(all::add);
      assertThat(all).hasSize(2);
      assertThat(responseHeaders.get().get(MetadataEchoInterceptor.ASCII)).isEqualTo("Plain-Echo");
      assertThat(
              responseHeaders
                  .get()
                  .get(Metadata.Key.of("grpc-encoding", Metadata.ASCII_STRING_MARSHALLER)))
          .isEqualTo("gzip");
      assertThat(trailers.get().get(MetadataEchoInterceptor.BIN))
          .containsExactly(EndToEndTestBase.BINARY);
    } finally {
      channel.shutdownNow().awaitTermination(5, SECONDS);
      server.stop();
    }
  }

  @Test
  void plainGrpcClientCallsTheYarpcServedService() throws Exception {
    GrpcTransport transport = GrpcTransport.create();
    GrpcInbound inbound = transport.inbound(new InetSocketAddress("127.0.0.1", 0));
    Dispatcher server = Dispatcher.builder("echo").inbound(inbound).build();
    server.register(ProtobufProcedures.of(new EchoService()));
    server.start();
    Metadata yarpc = new Metadata();
    yarpc.put(Metadata.Key.of("rpc-caller", Metadata.ASCII_STRING_MARSHALLER), "plain-client");
    yarpc.put(Metadata.Key.of("rpc-service", Metadata.ASCII_STRING_MARSHALLER), "echo");
    yarpc.put(Metadata.Key.of("rpc-encoding", Metadata.ASCII_STRING_MARSHALLER), "proto");
    ManagedChannel channel =
        NettyChannelBuilder.forAddress("127.0.0.1", inbound.port())
            .usePlaintext()
            .intercept(MetadataUtils.newAttachHeadersInterceptor(yarpc))
            .build();
    try {
      EchoGrpc.EchoBlockingStub stub =
          EchoGrpc.newBlockingStub(channel).withDeadlineAfter(5, SECONDS);

      EchoResponse r = stub.unary(EndToEndTestBase.request("plain"));
      assertThat(r.getMessage()).isEqualTo("plain");
      assertThat(r.getHeadersMap()).doesNotContainKeys("rpc-caller", "rpc-encoding");

      Iterator<EchoResponse> it =
          stub.serverStream(EndToEndTestBase.request("s").toBuilder().setCount(5).build());
      List<EchoResponse> all = new ArrayList<>();
      it.forEachRemaining(all::add);
      assertThat(all).hasSize(5);

      StatusRuntimeException e =
          EndToEndTestBase.catchStatus(() -> stub.unary(failing("status-details")));
      assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
      assertThat(e.getStatus().getDescription()).isEqualTo("rude request");
      assertThat(StatusProto.fromThrowable(e).getDetails(0).unpack(BadRequest.class))
          .isEqualTo(EchoService.BAD_REQUEST);
    } finally {
      channel.shutdownNow().awaitTermination(5, SECONDS);
      server.stop();
      transport.stop();
    }
  }

  /**
   * An error with details sends the details in {@code grpc-status-details-bin} and, as the message that
   * yarpc-go always sends with a status, an empty one: never the details as a response message, which a
   * client that parses every message it gets (grpc-js, protobufjs) fails on with {@code INTERNAL}.
   */
  @Test
  void anErrorWithDetailsSendsAnEmptyMessageNotTheDetails() throws Exception {
    GrpcTransport transport = GrpcTransport.create();
    GrpcInbound inbound = transport.inbound(new InetSocketAddress("127.0.0.1", 0));
    Dispatcher server = Dispatcher.builder("echo").inbound(inbound).build();
    server.register(ProtobufProcedures.of(new EchoService()));
    server.start();
    ManagedChannel channel =
        NettyChannelBuilder.forAddress("127.0.0.1", inbound.port()).usePlaintext().build();
    io.grpc.MethodDescriptor.Marshaller<byte[]> bytes =
        new io.grpc.MethodDescriptor.Marshaller<>() {
          @Override
          public java.io.InputStream stream(byte[] value) {
            return new java.io.ByteArrayInputStream(value);
          }

          @Override
          public byte[] parse(java.io.InputStream in) {
            try {
              return in.readAllBytes();
            } catch (java.io.IOException e) {
              throw new java.io.UncheckedIOException(e);
            }
          }
        };
    io.grpc.MethodDescriptor<byte[], byte[]> unary =
        io.grpc.MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(EchoGrpc.getUnaryMethod().getFullMethodName())
            .setRequestMarshaller(bytes)
            .setResponseMarshaller(bytes)
            .build();
    List<byte[]> messages = new java.util.concurrent.CopyOnWriteArrayList<>();
    java.util.concurrent.CompletableFuture<Status> closed =
        new java.util.concurrent.CompletableFuture<>();
    java.util.concurrent.atomic.AtomicReference<Metadata> trailers =
        new java.util.concurrent.atomic.AtomicReference<>();
    try {
      io.grpc.ClientCall<byte[], byte[]> call =
          channel.newCall(unary, io.grpc.CallOptions.DEFAULT.withDeadlineAfter(5, SECONDS));
      call.start(
          new io.grpc.ClientCall.Listener<>() {
            @Override
            public void onMessage(byte[] message) {
              messages.add(message);
            }

            @Override
            public void onClose(Status status, Metadata t) {
              trailers.set(t);
              closed.complete(status);
            }
          },
          new Metadata());
      call.request(2);
      call.sendMessage(failing("status-details").toByteArray());
      call.halfClose();
      Status status = closed.get(10, SECONDS);

      assertThat(status.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
      assertThat(
              StatusProto.fromStatusAndTrailers(status, trailers.get())
                  .getDetails(0)
                  .unpack(BadRequest.class))
          .isEqualTo(EchoService.BAD_REQUEST);
      assertThat(messages).as("messages received with the error").hasSize(1);
      assertThat(messages.get(0)).as("the message sent with the error").isEmpty();
    } finally {
      channel.shutdownNow().awaitTermination(5, SECONDS);
      server.stop();
      transport.stop();
    }
  }

  @Test
  void yarpcChannelCallsAPlainGrpcServer() throws Exception {
    Server plain =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .addService(new EchoService())
            .build()
            .start();
    GrpcTransport transport = GrpcTransport.create();
    GrpcOutbound outbound = transport.singleOutbound("127.0.0.1:" + plain.getPort());
    Dispatcher client =
        Dispatcher.builder("client")
            .outbound("echo", Outbounds.builder().unary(outbound).stream(outbound).build())
            .build();
    client.start();
    try {
      EchoGrpc.EchoBlockingStub stub =
          EchoGrpc.newBlockingStub(YarpcChannel.of(client.clientConfig("echo")))
              .withDeadlineAfter(5, SECONDS);

      // Outside a YARPC handler, the service sees no Call; it still echoes.
      assertThat(stub.unary(EndToEndTestBase.request("to-plain")).getMessage())
          .isEqualTo("to-plain");
      List<EchoResponse> all = new ArrayList<>();
      stub.serverStream(EndToEndTestBase.request("s").toBuilder().setCount(3).build())
          .forEachRemaining(all::add);
      assertThat(all).extracting(EchoResponse::getIndex).containsExactly(0, 1, 2);

      StatusRuntimeException e =
          EndToEndTestBase.catchStatus(() -> stub.unary(failing("status-details")));
      assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
      assertThat(StatusProto.fromThrowable(e).getDetailsCount()).isEqualTo(2);
    } finally {
      client.stop();
      transport.stop();
      plain.shutdownNow().awaitTermination(5, SECONDS);
    }
  }
}
