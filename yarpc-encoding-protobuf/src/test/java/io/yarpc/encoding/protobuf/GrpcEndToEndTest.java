package io.yarpc.encoding.protobuf;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.Outbounds;
import io.yarpc.encoding.protobuf.testing.EchoGrpc;
import io.yarpc.encoding.protobuf.testing.EchoRequest;
import io.yarpc.encoding.protobuf.testing.EchoResponse;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.grpc.GrpcInbound;
import io.yarpc.transport.grpc.GrpcOutbound;
import io.yarpc.transport.grpc.GrpcTransport;
import java.net.InetSocketAddress;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The generated service and stubs over the gRPC transport: unary and all three stream shapes. JSON error
 * details cannot cross gRPC (it carries {@code grpc-status-details-bin} as a binary {@code
 * google.rpc.Status} only, as yarpc-go's gRPC transport does), so for JSON only code and message are
 * checked. Leaked Netty buffers fail the test through yarpc-testing's leak detection extension.
 */
class GrpcEndToEndTest extends EndToEndTestBase {
  private final GrpcTransport serverTransport = GrpcTransport.create();
  private final GrpcTransport clientTransport = GrpcTransport.create();
  private GrpcInbound inbound;

  @Override
  List<Inbound> serverInbounds() {
    inbound = serverTransport.inbound(new InetSocketAddress("127.0.0.1", 0));
    return List.of(inbound);
  }

  @Override
  Outbounds clientOutbounds() {
    GrpcOutbound out = clientTransport.singleOutbound("127.0.0.1:" + inbound.port());
    return Outbounds.builder().unary(out).stream(out).build();
  }

  @Override
  boolean supportsStreaming() {
    return true;
  }

  @Override
  boolean carriesJsonErrorDetails() {
    return false;
  }

  /**
   * {@code request(n)} flow control holds end to end through a {@link YarpcChannel}: a stub that asks for
   * one message at a time gets one at a time, the grpc-java service behind the YARPC inbound sees {@code
   * isReady()} turn false once the windows between them are full, and it resumes on {@code onReady} as the
   * stub asks for more.
   */
  @Test
  void serverStreamingFlowControlHoldsEndToEnd() throws Exception {
    int count = 120; // 120 x 64 KiB: several times the HTTP/2 windows between the two ends
    com.google.protobuf.ByteString payload =
        com.google.protobuf.ByteString.copyFrom(new byte[64 * 1024]);
    java.util.concurrent.LinkedBlockingQueue<Object> events =
        new java.util.concurrent.LinkedBlockingQueue<>();
    io.grpc.ClientCall<EchoRequest, EchoResponse> call =
        channel("proto")
            .newCall(
                EchoGrpc.getServerStreamMethod(),
                io.grpc.CallOptions.DEFAULT.withDeadlineAfter(60, SECONDS));
    call.start(
        new io.grpc.ClientCall.Listener<>() {
          @Override
          public void onMessage(EchoResponse message) {
            events.add(message.getIndex());
          }

          @Override
          public void onClose(io.grpc.Status status, io.grpc.Metadata trailers) {
            events.add(status.getCode());
          }
        },
        new io.grpc.Metadata());
    call.sendMessage(request("flow").toBuilder().setCount(count).setPayload(payload).build());
    call.halfClose();

    call.request(1);
    assertThat(events.poll(10, SECONDS)).isEqualTo(0);
    // The stub asked for nothing more: the server fills the windows, then sees isReady() turn
    // false.
    long until = System.nanoTime() + SECONDS.toNanos(20);
    while (service.serverStreamPauses.get() == 0 && System.nanoTime() < until) {
      Thread.sleep(10);
    }
    assertThat(service.serverStreamPauses.get())
        .as("the server saw isReady() turn false")
        .isPositive();
    int sentWhilePaused = service.serverStreamSent.get();
    assertThat(sentWhilePaused).as("the server stopped well before the end").isLessThan(count);
    assertThat(events.poll(200, java.util.concurrent.TimeUnit.MILLISECONDS))
        .as("nothing is delivered beyond what was requested")
        .isNull();

    for (int i = 1; i < count; i++) {
      call.request(1);
      assertThat(events.poll(10, SECONDS)).as("message %d", i).isEqualTo(i);
      assertThat(events.peek()).as("one message per request").isNull();
    }
    call.request(1);
    assertThat(events.poll(10, SECONDS)).isEqualTo(io.grpc.Status.Code.OK);
    assertThat(service.serverStreamSent).hasValue(count);
  }

  /** As over a ManagedChannel: a header the server put in the trailers only is not in onHeaders. */
  @Test
  void responseHeadersSentAsTrailersAreNotInitialHeaders() {
    java.util.concurrent.atomic.AtomicReference<io.grpc.Metadata> headers =
        new java.util.concurrent.atomic.AtomicReference<>();
    java.util.concurrent.atomic.AtomicReference<io.grpc.Metadata> trailers =
        new java.util.concurrent.atomic.AtomicReference<>();
    blocking("proto")
        .withInterceptors(
            io.grpc.stub.MetadataUtils.newCaptureMetadataInterceptor(headers, trailers))
        .unary(request("where"));
    assertThat(trailers.get().get(ECHOED_BY)).isEqualTo("echo-service");
    assertThat(headers.get().get(ECHOED_BY)).isNull();
  }

  @Override
  void closeTransports() {
    clientTransport.stop();
    serverTransport.stop();
  }
}
