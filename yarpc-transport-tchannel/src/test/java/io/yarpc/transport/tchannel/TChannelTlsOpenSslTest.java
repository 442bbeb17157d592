package io.yarpc.transport.tchannel;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.handler.ssl.OpenSsl;
import io.yarpc.tls.TlsProvider;
import org.junit.jupiter.api.BeforeAll;

/** Every {@link TChannelTlsTest} again, with OpenSSL (netty-tcnative's BoringSSL) on both sides. */
class TChannelTlsOpenSslTest extends TChannelTlsTest {
  @BeforeAll
  static void openSsl() {
    assumeTrue(OpenSsl.isAvailable(), "OpenSSL is not available: " + OpenSsl.unavailabilityCause());
  }

  @Override
  protected TlsProvider provider() {
    return TlsProvider.OPENSSL;
  }
}
