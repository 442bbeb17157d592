package io.yarpc.transport.tchannel;

import io.yarpc.testing.TestCertificates;
import io.yarpc.tls.ClientAuth;
import io.yarpc.tls.TlsProvider;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * The conformance kit over mutual TLS: the inbound requires a client certificate from the test CA, the
 * client transport presents {@code CN=test-client}; OpenSSL (netty-tcnative's BoringSSL) on both sides.
 */
class TChannelMutualTlsConformanceTest extends TChannelTransportConformanceTest {
  @TempDir static Path dir;
  static TestCertificates certs;

  @BeforeAll
  static void pki() {
    certs = TestCertificates.generate(dir);
  }

  @Override
  protected TChannelInbound.Builder configureInbound(TChannelInbound.Builder b) {
    return b.tls(certs.serverConfig(ClientAuth.REQUIRE).provider(TlsProvider.OPENSSL).build());
  }

  @Override
  protected TChannelTransport.Builder configureClient(TChannelTransport.Builder b) {
    return b.tls(certs.mutualClientConfig().provider(TlsProvider.OPENSSL).build());
  }
}
