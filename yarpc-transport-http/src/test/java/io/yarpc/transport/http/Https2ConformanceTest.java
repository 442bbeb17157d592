package io.yarpc.transport.http;

import io.yarpc.testing.TestCertificates;
import io.yarpc.testing.TransportConformanceSuite;
import io.yarpc.testing.TransportUnderTest;
import io.yarpc.tls.ClientAuth;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/** The conformance kit over server-only TLS over HTTP/2 (ALPN h2), OpenSSL on both sides when netty-tcnative loads here. */
class Https2ConformanceTest extends TransportConformanceSuite {
  @TempDir static Path dir;
  private static TestCertificates certs;

  @BeforeAll
  static void certificates() {
    certs = TestCertificates.generate(dir);
  }

  @Override
  protected TransportUnderTest newTransport() {
    return new HttpConformanceTest.HttpUnderTest(
        true,
        certs.serverConfig(ClientAuth.NONE).provider(TlsTesting.openSslIfAvailable()).build(),
        certs.clientConfig().provider(TlsTesting.openSslIfAvailable()).build());
  }
}
