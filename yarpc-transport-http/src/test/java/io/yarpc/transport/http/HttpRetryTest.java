package io.yarpc.transport.http;

import io.yarpc.testing.RetrySuite;

/**
 * Retries over HTTP/1.1. HTTP/1.1 has no way for a server to say it refused a call before its handler: a
 * call refused that way is retried only when its procedure is idempotent (the suite's refusal test is
 * skipped). A refused connection is retried on the next peer.
 */
class HttpRetryTest extends RetrySuite {
  HttpRetryTest() {
    super(new HttpUnderTest(false));
  }

  @Override
  protected boolean signalsRefusal() {
    return false;
  }
}
