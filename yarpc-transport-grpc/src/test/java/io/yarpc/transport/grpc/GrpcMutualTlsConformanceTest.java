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
 * The transport conformance kit over mutual TLS on the JDK's provider: an {@code ENFORCED} inbound that
 * requires client certificates from the test CA, and a client transport presenting one.
 */
class GrpcMutualTlsConformanceTest extends TransportConformanceSuite {
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
            .tls(certs.mutualClientConfig().provider(TlsProvider.JDK).build())
            .build(),
        b -> b.tls(certs.serverConfig(ClientAuth.REQUIRE).provider(TlsProvider.JDK).build()));
  }
}
