package io.yarpc.transport.http;

import io.yarpc.peer.PeerChooser;
import io.yarpc.peer.PeerTransport;
import io.yarpc.testing.PeerReleaseSuite;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.UnaryOutbound;

/** A released h2c peer lets the streams under way on its connection finish, then closes it. */
class Http2PeerReleaseTest extends PeerReleaseSuite {
  @Override
  protected Inbound newInbound() {
    return HttpTransport.create().inbound();
  }

  @Override
  protected PeerTransport newClientTransport() {
    return HttpTransport.create();
  }

  @Override
  protected UnaryOutbound outbound(PeerTransport transport, PeerChooser chooser) {
    return ((HttpTransport) transport).outboundBuilder(chooser).http2(true).build();
  }
}
