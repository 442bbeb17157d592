package io.yarpc.transport.tchannel;

import io.yarpc.testing.TestCertificates;
import io.yarpc.tls.ClientAuth;
import io.yarpc.tls.TlsProvider;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * The conformance kit over TLS with a server certificate only: the inbound is TLS-only ({@code
 * ENFORCED}), the client transport dials with TLS, trusting the test CA and verifying {@code 127.0.0.1};
 * the JDK's TLS on both sides.
 */
class TChannelTlsConformanceTest extends TChannelTransportConformanceTest {
  @TempDir static Path dir;
  static TestCertificates certs;

  @BeforeAll
  static void pki() {
    certs = TestCertificates.generate(dir);
  }

  @Override
  protected TChannelInbound.Builder configureInbound(TChannelInbound.Builder b) {
    return b.tls(certs.serverConfig(ClientAuth.NONE).provider(TlsProvider.JDK).build());
  }

  @Override
  protected TChannelTransport.Builder configureClient(TChannelTransport.Builder b) {
    return b.tls(certs.clientConfig().provider(TlsProvider.JDK).build());
  }
}
