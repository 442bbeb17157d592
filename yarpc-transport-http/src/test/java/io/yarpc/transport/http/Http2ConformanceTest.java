package io.yarpc.transport.http;

import io.yarpc.testing.TransportConformanceSuite;
import io.yarpc.testing.TransportUnderTest;

/** The conformance kit over h2c (HTTP/2 with prior knowledge) on the same inbound port. */
class Http2ConformanceTest extends TransportConformanceSuite {
  @Override
  protected TransportUnderTest newTransport() {
    return new HttpConformanceTest.HttpUnderTest(true);
  }
}
