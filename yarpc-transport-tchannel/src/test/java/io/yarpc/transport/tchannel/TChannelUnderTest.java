package io.yarpc.transport.tchannel;

import io.yarpc.peer.PeerChooser;
import io.yarpc.peer.PeerTransport;
import io.yarpc.testing.PeerTransportUnderTest;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.UnaryOutbound;

/** TChannel's ends for the peer-transport suites. */
final class TChannelUnderTest implements PeerTransportUnderTest {
  @Override
  public Inbound newInbound() {
    return TChannelTransport.of("suite-server").inbound();
  }

  @Override
  public PeerTransport newClientTransport() {
    return TChannelTransport.of("suite-client");
  }

  @Override
  public UnaryOutbound outbound(PeerTransport transport, PeerChooser chooser) {
    return ((TChannelTransport) transport).outbound(chooser);
  }
}
