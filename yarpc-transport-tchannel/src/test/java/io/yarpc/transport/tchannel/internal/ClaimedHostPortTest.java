package io.yarpc.transport.tchannel.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.testing.TestCertificates;
import io.yarpc.transport.ConnectionInfo;
import java.io.InputStream;
import java.lang.reflect.Proxy;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which claimed {@code host_port}s a connection's address or verified certificate backs. */
class ClaimedHostPortTest {
  @TempDir static Path dir;
  private static Certificate server; // SANs DNS:localhost, IP:127.0.0.1, IP:::1

  @BeforeAll
  static void pki() throws Exception {
    TestCertificates certs = TestCertificates.generate(dir);
    try (InputStream in = Files.newInputStream(certs.server().certificate())) {
      server = CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
  }

  @Test
  void theRemoteAddressBacksAClaimOfItsOwnIp() throws Exception {
    ConnectionInfo from127001 = plaintext("127.0.0.1");
    assertThat(ClaimedHostPort.isBacked("127.0.0.1:4040", from127001, false)).isTrue();
    assertThat(ClaimedHostPort.isBacked("127.0.0.2:4040", from127001, false)).isFalse();
    assertThat(ClaimedHostPort.isBacked("10.1.2.3:4040", from127001, false)).isFalse();

    ConnectionInfo from6 = plaintext("::1");
    assertThat(ClaimedHostPort.isBacked("[::1]:4040", from6, false)).isTrue();
    assertThat(ClaimedHostPort.isBacked("[0:0:0:0:0:0:0:1]:4040", from6, false)).isTrue();
    assertThat(ClaimedHostPort.isBacked("127.0.0.1:4040", from6, false)).isFalse();
  }

  @Test
  void aHostNameIsNeverResolvedForTheAddressCheck() throws Exception {
    assertThat(ClaimedHostPort.isBacked("localhost:4040", plaintext("127.0.0.1"), false)).isFalse();
  }

  @Test
  void whenACertificateIsRequiredTheAddressDoesNotCount() throws Exception {
    assertThat(ClaimedHostPort.isBacked("127.0.0.1:4040", plaintext("127.0.0.1"), true)).isFalse();
    assertThat(ClaimedHostPort.isBacked("127.0.0.1:4040", tls("127.0.0.1", null), true)).isFalse();
  }

  @Test
  void aVerifiedCertificateBacksTheNamesItCarries() throws Exception {
    ConnectionInfo elsewhere = tls("10.9.9.9", server);
    for (boolean required : new boolean[] {false, true}) {
      assertThat(ClaimedHostPort.isBacked("127.0.0.1:1", elsewhere, required)).isTrue();
      assertThat(ClaimedHostPort.isBacked("[::1]:1", elsewhere, required)).isTrue();
      assertThat(ClaimedHostPort.isBacked("localhost:1", elsewhere, required)).isTrue();
      assertThat(ClaimedHostPort.isBacked("LocalHost:1", elsewhere, required)).isTrue();
      assertThat(ClaimedHostPort.isBacked("127.0.0.2:1", elsewhere, required)).isFalse();
      assertThat(ClaimedHostPort.isBacked("other.test:1", elsewhere, required)).isFalse();
      assertThat(ClaimedHostPort.isBacked("sub.localhost:1", elsewhere, required)).isFalse();
    }
  }

  @Test
  void malformedClaimsAreNeverBacked() throws Exception {
    ConnectionInfo c = tls("127.0.0.1", server);
    for (String claim : new String[] {"", "4040", ":4040", "[]:4040", "127.0.0.1"}) {
      assertThat(ClaimedHostPort.isBacked(claim, c, false)).as(claim).isFalse();
    }
  }

  private static ConnectionInfo plaintext(String remoteIp) throws Exception {
    return ConnectionInfo.plaintext(
        new InetSocketAddress(InetAddress.getByName(remoteIp), 50000),
        new InetSocketAddress(InetAddress.getLoopbackAddress(), 4000));
  }

  /** A TLS connection whose session holds {@code peer} as the verified client certificate (or none). */
  private static ConnectionInfo tls(String remoteIp, Certificate peer) throws Exception {
    SSLSession session =
        (SSLSession)
            Proxy.newProxyInstance(
                ClaimedHostPortTest.class.getClassLoader(),
                new Class<?>[] {SSLSession.class},
                (proxy, method, args) -> {
                  switch (method.getName()) {
                    case "getPeerCertificates":
                      if (peer == null) {
                        throw new SSLPeerUnverifiedException("no certificate");
                      }
                      return new Certificate[] {peer};
                    case "getProtocol":
                      return "TLSv1.3";
                    default:
                      throw new UnsupportedOperationException(method.getName());
                  }
                });
    return ConnectionInfo.tls(
        new InetSocketAddress(InetAddress.getByName(remoteIp), 50000),
        new InetSocketAddress(InetAddress.getLoopbackAddress(), 4000),
        session);
  }
}
