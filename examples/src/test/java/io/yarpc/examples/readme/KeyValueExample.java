package io.yarpc.examples.readme;

// [START protobuf]
import com.google.rpc.BadRequest;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.StreamObserver;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.encoding.protobuf.ProtobufErrors;
import io.yarpc.encoding.protobuf.ProtobufProcedures;
import io.yarpc.encoding.protobuf.YarpcChannel;
import io.yarpc.errors.Code;                      // not io.grpc.Status.Code, not com.google.rpc.Code
import io.yarpc.examples.keyvalue.GetValueRequest;   // generated from keyvalue.proto
import io.yarpc.examples.keyvalue.GetValueResponse;
import io.yarpc.examples.keyvalue.KeyValueGrpc;
import io.yarpc.transport.grpc.GrpcInbound;
import io.yarpc.transport.grpc.GrpcOutbound;
import io.yarpc.transport.grpc.GrpcTransport;
import io.yarpc.transport.http.HttpTransport;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

public final class KeyValueExample {
  static final class KeyValueImpl extends KeyValueGrpc.KeyValueImplBase {
    @Override
    public void getValue(GetValueRequest request, StreamObserver<GetValueResponse> response) {
      if (request.getKey().isEmpty()) {   // errors keep code, message and google.rpc.Status details
        response.onError(ProtobufErrors.newError(Code.INVALID_ARGUMENT, "key is required",
            BadRequest.newBuilder().addFieldViolations(BadRequest.FieldViolation.newBuilder()
                .setField("key").setDescription("must not be empty")).build()));
        return;
      }
      response.onNext(GetValueResponse.newBuilder().setValue("v").build());
      response.onCompleted();
    }
  }

  public static void main(String[] args) throws Exception {
    GrpcTransport grpc = GrpcTransport.create();
    GrpcInbound inbound = grpc.inbound(new InetSocketAddress("127.0.0.1", 0));  // 0: a free port
    Dispatcher server = Dispatcher.builder("keyvalue")
        .inbound(inbound, HttpTransport.create().inbound())
        .build();
    server.register(ProtobufProcedures.of(new KeyValueImpl()));  // unary: every inbound; streams: gRPC
    server.start();

    GrpcOutbound out = GrpcTransport.create().singleOutbound("127.0.0.1:" + inbound.port());
    Dispatcher client = Dispatcher.builder("keyvalue-client")
        .outbound("keyvalue", Outbounds.builder().unary(out).stream(out).build())  // stream: for streams
        .build();
    client.start();
    try {
      KeyValueGrpc.KeyValueBlockingStub kv =   // YarpcChannel.of(config, "json"): proto3 JSON on the wire
          KeyValueGrpc.newBlockingStub(YarpcChannel.of(client.clientConfig("keyvalue")));
      GetValueResponse r = kv.withDeadlineAfter(10, TimeUnit.SECONDS)
          .getValue(GetValueRequest.newBuilder().setKey("k").build());
      System.out.println("k = " + r.getValue());
      try {
        kv.withDeadlineAfter(10, TimeUnit.SECONDS).getValue(GetValueRequest.getDefaultInstance());
      } catch (StatusRuntimeException e) {         // the server's code, message and details
        com.google.rpc.Status status = StatusProto.fromThrowable(e);    // not io.grpc.Status
        BadRequest.FieldViolation violation =
            status.getDetails(0).unpack(BadRequest.class).getFieldViolations(0);
        System.out.println(e.getStatus().getCode() + ": " + status.getMessage() + ", "
            + violation.getField() + " " + violation.getDescription());
      }
    } finally {
      client.stop();
      server.stop();
    }
  }
}
// [END protobuf]
