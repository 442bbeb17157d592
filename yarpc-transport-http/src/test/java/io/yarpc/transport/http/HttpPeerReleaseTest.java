package io.yarpc.transport.http;

import io.yarpc.testing.PeerReleaseSuite;

/** A released HTTP/1.1 peer lets its busy connections finish their calls, then closes them. */
class HttpPeerReleaseTest extends PeerReleaseSuite {
  HttpPeerReleaseTest() {
    super(new HttpUnderTest(false));
  }
}
