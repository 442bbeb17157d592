package io.yarpc.transport.http;

import io.yarpc.testing.RetrySuite;

/**
 * Retries over h2c: a call the server's dispatcher refuses before its handler is answered with {@code
 * RST_STREAM REFUSED_STREAM}, which the client reads as unprocessed and retries on the next peer.
 */
class Http2RetryTest extends RetrySuite {
  Http2RetryTest() {
    super(new HttpUnderTest(true));
  }
}
