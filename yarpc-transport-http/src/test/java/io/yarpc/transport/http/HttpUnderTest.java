package io.yarpc.transport.http;

import io.yarpc.peer.PeerChooser;
import io.yarpc.peer.PeerTransport;
import io.yarpc.testing.PeerTransportUnderTest;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.UnaryOutbound;

/** The HTTP transport's ends for the peer-transport suites: outbounds over HTTP/1.1 or h2c. */
final class HttpUnderTest implements PeerTransportUnderTest {
  private final boolean http2;

  /** Outbounds over h2c when {@code http2}, else HTTP/1.1. */
  HttpUnderTest(boolean http2) {
    this.http2 = http2;
  }

  @Override
  public Inbound newInbound() {
    return HttpTransport.create().inbound();
  }

  @Override
  public PeerTransport newClientTransport() {
    return HttpTransport.create();
  }

  @Override
  public UnaryOutbound outbound(PeerTransport transport, PeerChooser chooser) {
    return ((HttpTransport) transport).outboundBuilder(chooser).http2(http2).build();
  }
}
