package io.yarpc.transport.tchannel;

import io.yarpc.peer.PeerChooser;
import io.yarpc.peer.PeerTransport;
import io.yarpc.testing.PeerReleaseSuite;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.UnaryOutbound;

/** A released TChannel peer finishes its calls in flight before it closes its connection. */
class TChannelPeerReleaseTest extends PeerReleaseSuite {
  @Override
  protected Inbound newInbound() {
    return TChannelTransport.of("release-server").inbound();
  }

  @Override
  protected PeerTransport newClientTransport() {
    return TChannelTransport.of("release-client");
  }

  @Override
  protected UnaryOutbound outbound(PeerTransport transport, PeerChooser chooser) {
    return ((TChannelTransport) transport).outbound(chooser);
  }
}
