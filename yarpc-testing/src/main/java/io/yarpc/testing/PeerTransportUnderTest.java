package io.yarpc.testing;

import io.yarpc.peer.PeerChooser;
import io.yarpc.peer.PeerTransport;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.UnaryOutbound;

/**
 * What a peer transport gives {@link RetrySuite} and {@link PeerReleaseSuite}: its server end, its client
 * transport, and a unary outbound of that transport over a chooser the suite brings. One implementation
 * serves both suites; each suite calls it from its tests' thread.
 */
public interface PeerTransportUnderTest {
  /** A new inbound, not started, listening on an ephemeral port of 127.0.0.1. */
  Inbound newInbound();

  /** A new client transport whose peers are {@code 127.0.0.1:port} identifiers. */
  PeerTransport newClientTransport();

  /** A unary outbound of {@code transport} (from {@link #newClientTransport()}) over {@code chooser}. */
  UnaryOutbound outbound(PeerTransport transport, PeerChooser chooser);
}
