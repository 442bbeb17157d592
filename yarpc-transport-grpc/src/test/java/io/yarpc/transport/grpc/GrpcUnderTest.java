package io.yarpc.transport.grpc;

import io.yarpc.peer.PeerChooser;
import io.yarpc.peer.PeerTransport;
import io.yarpc.testing.PeerTransportUnderTest;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.UnaryOutbound;
import java.net.InetSocketAddress;

/** gRPC's ends for the peer-transport suites. */
final class GrpcUnderTest implements PeerTransportUnderTest {
  @Override
  public Inbound newInbound() {
    return GrpcTransport.create().inbound(new InetSocketAddress("127.0.0.1", 0));
  }

  @Override
  public PeerTransport newClientTransport() {
    return GrpcTransport.create();
  }

  @Override
  public UnaryOutbound outbound(PeerTransport transport, PeerChooser chooser) {
    return ((GrpcTransport) transport).outbound(chooser);
  }
}
