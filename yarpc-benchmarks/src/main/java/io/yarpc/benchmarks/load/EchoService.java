package io.yarpc.benchmarks.load;

import io.grpc.stub.StreamObserver;
import io.yarpc.benchmarks.proto.EchoGrpc;
import io.yarpc.benchmarks.proto.EchoMessage;

/**
 * The benchmark's server: a plain grpc-java generated service that echoes every message, served as is by
 * plain grpc-java and through {@code ProtobufProcedures} by YARPC.
 */
public final class EchoService extends EchoGrpc.EchoImplBase {
  @Override
  public void unary(EchoMessage request, StreamObserver<EchoMessage> responseObserver) {
    responseObserver.onNext(request);
    responseObserver.onCompleted();
  }

  @Override
  public StreamObserver<EchoMessage> stream(StreamObserver<EchoMessage> responseObserver) {
    return new StreamObserver<>() {
      @Override
      public void onNext(EchoMessage message) {
        responseObserver.onNext(message);
      }

      @Override
      public void onError(Throwable t) {
        // the client went away; nothing to clean up
      }

      @Override
      public void onCompleted() {
        responseObserver.onCompleted();
      }
    };
  }
}
