package io.yarpc.transport.http;

import io.yarpc.peer.PeerChooser;
import io.yarpc.peer.PeerTransport;
import io.yarpc.testing.RetrySuite;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.UnaryOutbound;

/**
 * Retries over HTTP/1.1. HTTP/1.1 has no way for a server to say it refused a call before its handler: a
 * call refused that way is retried only when its procedure is idempotent (the suite's refusal test is
 * skipped). A refused connection is retried on the next peer.
 */
class HttpRetryTest extends RetrySuite {
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

  @Override
  protected boolean signalsRefusal() {
    return false;
  }
}
