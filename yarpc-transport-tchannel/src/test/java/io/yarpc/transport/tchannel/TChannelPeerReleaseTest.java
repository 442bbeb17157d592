package io.yarpc.transport.tchannel;

import io.yarpc.testing.PeerReleaseSuite;

/** A released TChannel peer finishes its calls in flight before it closes its connection. */
class TChannelPeerReleaseTest extends PeerReleaseSuite {
  TChannelPeerReleaseTest() {
    super(new TChannelUnderTest());
  }
}
