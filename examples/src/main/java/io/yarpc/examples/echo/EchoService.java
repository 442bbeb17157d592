package io.yarpc.examples.echo;

import io.grpc.stub.StreamObserver;

/**
 * The {@code yarpc.examples.echo.Echo} service of the {@code yarpc-test} interop subject, as a plain
 * grpc-java service: {@code Echo} returns its request.
 */
public final class EchoService extends EchoGrpc.EchoImplBase {
  @Override
  public void echo(EchoMessage request, StreamObserver<EchoMessage> response) {
    response.onNext(request);
    response.onCompleted();
  }
}
