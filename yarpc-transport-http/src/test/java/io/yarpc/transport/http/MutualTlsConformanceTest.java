package io.yarpc.transport.http;

import io.yarpc.testing.TestCertificates;
import io.yarpc.testing.TransportConformanceSuite;
import io.yarpc.testing.TransportUnderTest;
import io.yarpc.tls.ClientAuth;
import io.yarpc.tls.TlsProvider;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/** The conformance kit over mutual TLS over HTTP/1.1, OpenSSL on the server's side (when it loads here) and the JDK's on the client's. */
class MutualTlsConformanceTest extends TransportConformanceSuite {
  @TempDir static Path dir;
  private static TestCertificates certs;

  @BeforeAll
  static void certificates() {
    certs = TestCertificates.generate(dir);
  }

  @Override
  protected TransportUnderTest newTransport() {
    return new HttpConformanceTest.HttpUnderTest(
        false,
        certs.serverConfig(ClientAuth.REQUIRE).provider(TlsTesting.openSslIfAvailable()).build(),
        certs.mutualClientConfig().provider(TlsProvider.JDK).build());
  }
}
