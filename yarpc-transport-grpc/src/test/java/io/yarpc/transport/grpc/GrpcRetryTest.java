package io.yarpc.transport.grpc;

import io.yarpc.testing.RetrySuite;

/**
 * Retries over gRPC. A grpc-java server cannot refuse a call with {@code REFUSED_STREAM} through its API
 * (grpc-java's client retries a refused stream or one past a GOAWAY by itself), so a call the dispatcher
 * refuses before its handler is retried only when its procedure is idempotent; a peer grpc-java cannot
 * connect to is retried on the next peer.
 */
class GrpcRetryTest extends RetrySuite {
  GrpcRetryTest() {
    super(new GrpcUnderTest());
  }

  @Override
  protected boolean signalsRefusal() {
    return false;
  }
}
