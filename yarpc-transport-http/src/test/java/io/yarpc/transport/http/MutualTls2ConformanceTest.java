package io.yarpc.transport.http;

import io.yarpc.testing.TestCertificates;
import io.yarpc.testing.TransportConformanceSuite;
import io.yarpc.testing.TransportUnderTest;
import io.yarpc.tls.ClientAuth;
import io.yarpc.tls.TlsProvider;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/** The conformance kit over mutual TLS over HTTP/2 (ALPN h2), the JDK's TLS on the server's side and OpenSSL on the client's (when it loads here). */
class MutualTls2ConformanceTest extends TransportConformanceSuite {
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
        certs.serverConfig(ClientAuth.REQUIRE).provider(TlsProvider.JDK).build(),
        certs.mutualClientConfig().provider(TlsTesting.openSslIfAvailable()).build());
  }
}
