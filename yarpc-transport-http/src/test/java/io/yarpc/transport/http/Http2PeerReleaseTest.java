package io.yarpc.transport.http;

import io.yarpc.testing.PeerReleaseSuite;

/** A released h2c peer lets the streams under way on its connection finish, then closes it. */
class Http2PeerReleaseTest extends PeerReleaseSuite {
  Http2PeerReleaseTest() {
    super(new HttpUnderTest(true));
  }
}
