package io.yarpc.transport.grpc;

import io.yarpc.peer.PeerChooser;
import io.yarpc.peer.PeerTransport;
import io.yarpc.testing.PeerReleaseSuite;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.UnaryOutbound;
import java.net.InetSocketAddress;

/** A released gRPC peer shuts its channel down gracefully: calls in flight finish first. */
class GrpcPeerReleaseTest extends PeerReleaseSuite {
  @Override
  protected Inbound newInbound() {
    return GrpcTransport.create().inbound(new InetSocketAddress("127.0.0.1", 0));
  }

  @Override
  protected PeerTransport newClientTransport() {
    return GrpcTransport.create();
  }

  @Override
  protected UnaryOutbound outbound(PeerTransport transport, PeerChooser chooser) {
    return ((GrpcTransport) transport).outbound(chooser);
  }
}
