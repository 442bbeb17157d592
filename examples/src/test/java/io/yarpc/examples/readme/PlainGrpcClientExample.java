package io.yarpc.examples.readme;

// [START plain-grpc-client]
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.yarpc.examples.keyvalue.GetValueRequest;
import io.yarpc.examples.keyvalue.KeyValueGrpc;
import io.yarpc.examples.keyvalue.SetValueRequest;
import java.util.concurrent.TimeUnit;

public final class PlainGrpcClientExample {
  public static void main(String[] args) throws InterruptedException {
    String target = args.length > 0 ? args[0] : "127.0.0.1:8081";   // a YARPC gRPC inbound (serve's)
    ManagedChannel channel = Grpc.newChannelBuilder(target, InsecureChannelCredentials.create()).build();
    try {
      KeyValueGrpc.KeyValueBlockingStub kv = KeyValueGrpc.newBlockingStub(channel);  // no rpc-*, no deadline
      kv.setValue(SetValueRequest.newBuilder().setKey("k").setValue("v").build());
      System.out.println("k = " + kv.getValue(GetValueRequest.newBuilder().setKey("k").build()).getValue());
    } finally {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }
}
// [END plain-grpc-client]
