package io.yarpc.examples.readme;

// [START deadline-policy]
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.yarpc.Dispatcher;
import io.yarpc.encoding.protobuf.ProtobufProcedures;
import io.yarpc.examples.keyvalue.GetValueRequest;
import io.yarpc.examples.keyvalue.GetValueResponse;
import io.yarpc.examples.keyvalue.KeyValueGrpc;
import io.yarpc.transport.DeadlinePolicy;
import io.yarpc.transport.grpc.GrpcInbound;
import io.yarpc.transport.grpc.GrpcTransport;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

public final class DeadlinePolicyExample {
  static final class KeyValueImpl extends KeyValueGrpc.KeyValueImplBase {
    @Override
    public void getValue(GetValueRequest request, StreamObserver<GetValueResponse> response) {
      response.onNext(GetValueResponse.newBuilder().setValue("v").build());
      response.onCompleted();
    }
  }

  public static void main(String[] args) throws InterruptedException {
    GrpcTransport grpc = GrpcTransport.create();
    InetSocketAddress address = new InetSocketAddress("127.0.0.1", 0);   // 0: a free port
    GrpcInbound lenient = grpc.inboundBuilder(address)
        .deadlinePolicy(DeadlinePolicy.builder()
            .defaultTimeout(Duration.ofSeconds(60))  // unary calls without grpc-timeout get this (default)
            .maxTimeout(Duration.ofMinutes(5))       // a deadline further away is brought in (default: none)
            .build())
        .build();
    GrpcInbound strict = grpc.inboundBuilder(address)
        .deadlinePolicy(DeadlinePolicy.strict())    // as yarpc-go: no deadline, missing TTL
        .build();
    Dispatcher server = Dispatcher.builder("keyvalue").inbound(lenient, strict).build();
    server.register(ProtobufProcedures.of(new KeyValueImpl()));
    server.start();
    try {
      for (GrpcInbound inbound : List.of(lenient, strict)) {   // a plain grpc-java call without a deadline
        ManagedChannel channel = Grpc.newChannelBuilderForAddress(
            "127.0.0.1", inbound.port(), InsecureChannelCredentials.create()).build();
        try {
          GetValueResponse r = KeyValueGrpc.newBlockingStub(channel)
              .getValue(GetValueRequest.newBuilder().setKey("k").build());
          System.out.println("k = " + r.getValue());
        } catch (StatusRuntimeException e) {
          System.out.println(e.getStatus().getCode() + ": " + e.getStatus().getDescription());
        } finally {
          channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
      }
    } finally {
      server.stop();
    }
  }
}
// [END deadline-policy]
