package io.yarpc.encoding.protobuf;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.stub.StreamObserver;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.encoding.protobuf.testing.EchoGrpc;
import io.yarpc.encoding.protobuf.testing.EchoRequest;
import io.yarpc.encoding.protobuf.testing.EchoResponse;
import io.yarpc.testing.InMemoryTransport;
import io.yarpc.transport.Inbound;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The generated service and stubs over the in-memory transport: bodies are copied into pooled direct
 * buffers split in 16 KiB views, every body is tracked and must be released exactly once.
 */
class InMemoryEndToEndTest extends EndToEndTestBase {
  private final InMemoryTransport transport = InMemoryTransport.create();

  @Override
  List<Inbound> serverInbounds() {
    return List.of(transport.inbound());
  }

  @Override
  Outbounds clientOutbounds() {
    return transport.outbounds();
  }

  @Override
  boolean supportsStreaming() {
    return true;
  }

  @Override
  void assertNoLeaks() {
    transport.assertNoLeaks();
  }

  @Test
  void stubCallsMadeInsideAServedMethodInheritItsDeadline() {
    InMemoryTransport relayTransport = InMemoryTransport.create();
    Dispatcher relay =
        Dispatcher.builder("relay")
            .inbound(relayTransport.inbound())
            .outbound("echo", transport.outbounds())
            .build();
    EchoGrpc.EchoBlockingStub downstream =
        EchoGrpc.newBlockingStub(YarpcChannel.of(relay.clientConfig("echo")));
    relay.register(
        ProtobufProcedures.of(
            new EchoGrpc.EchoImplBase() {
              @Override
              public void unary(
                  EchoRequest request, StreamObserver<EchoResponse> responseObserver) {
                // No deadline on this stub: the relayed call inherits what is left of ours.
                responseObserver.onNext(downstream.unary(request));
                responseObserver.onCompleted();
              }
            }));
    relay.start();
    Dispatcher caller =
        Dispatcher.builder("caller").outbound("relay", relayTransport.outbounds()).build();
    caller.start();
    try {
      EchoResponse r =
          EchoGrpc.newBlockingStub(YarpcChannel.of(caller.clientConfig("relay")))
              .withDeadlineAfter(3, SECONDS)
              .unary(request("relayed"));

      assertThat(r.getMessage()).isEqualTo("relayed");
      assertThat(r.getDeadlineMillis())
          .as("the echo service saw the caller's deadline")
          .isBetween(1L, 3000L);
    } finally {
      caller.stop();
      relay.stop();
    }
    relayTransport.assertNoLeaks();
  }
}
