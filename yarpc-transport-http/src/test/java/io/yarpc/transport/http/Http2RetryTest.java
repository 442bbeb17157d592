package io.yarpc.transport.http;

import io.yarpc.peer.PeerChooser;
import io.yarpc.peer.PeerTransport;
import io.yarpc.testing.RetrySuite;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.UnaryOutbound;

/**
 * Retries over h2c: a call the server's dispatcher refuses before its handler is answered with {@code
 * RST_STREAM REFUSED_STREAM}, which the client reads as unprocessed and retries on the next peer.
 */
class Http2RetryTest extends RetrySuite {
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
