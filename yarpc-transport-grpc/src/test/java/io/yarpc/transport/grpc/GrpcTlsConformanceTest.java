package io.yarpc.transport.grpc;

import io.yarpc.testing.TestCertificates;
import io.yarpc.testing.TransportConformanceSuite;
import io.yarpc.testing.TransportUnderTest;
import io.yarpc.tls.ClientAuth;
import io.yarpc.tls.TlsProvider;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * The transport conformance kit over TLS: an {@code ENFORCED} inbound with a server certificate (no client
 * certificates) and a client transport that trusts its CA, both on the default provider (OpenSSL, which is
 * on the test class path).
 */
class GrpcTlsConformanceTest extends TransportConformanceSuite {
  @TempDir static Path dir;
  private static TestCertificates certs;

  @BeforeAll
  static void certificates() {
    certs = TestCertificates.generate(dir);
  }

  @Override
  protected TransportUnderTest newTransport() {
    return GrpcTransportConformanceTest.transportUnderTest(
        GrpcTransport.create(),
        GrpcTransport.builder()
            .tls(certs.clientConfig().provider(TlsProvider.AUTO).build())
            .build(),
        b -> b.tls(certs.serverConfig(ClientAuth.NONE).build()));
  }
}
