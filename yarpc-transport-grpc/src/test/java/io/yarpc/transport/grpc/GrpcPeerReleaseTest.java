package io.yarpc.transport.grpc;

import io.yarpc.testing.PeerReleaseSuite;

/** A released gRPC peer shuts its channel down gracefully: calls in flight finish first. */
class GrpcPeerReleaseTest extends PeerReleaseSuite {
  GrpcPeerReleaseTest() {
    super(new GrpcUnderTest());
  }
}
