package io.yarpc.transport.http;

import io.yarpc.peer.PeerChooser;
import io.yarpc.peer.PeerTransport;
import io.yarpc.testing.PeerReleaseSuite;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.UnaryOutbound;

/** A released HTTP/1.1 peer lets its busy connections finish their calls, then closes them. */
class HttpPeerReleaseTest extends PeerReleaseSuite {
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
    return ((HttpTransport) transport).outbound(chooser);
  }
}
