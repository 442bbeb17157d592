package io.yarpc.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TlsConfigTest {
  @TempDir Path dir;

  private Path file(String name, String text) throws Exception {
    return Files.writeString(dir.resolve(name), text);
  }

  @Test
  void defaultsAreStated() {
    TlsConfig c = TlsConfig.builder().build();
    assertThat(c.clientAuth()).isEqualTo(ClientAuth.NONE);
    assertThat(c.hostnameVerification()).isTrue();
    assertThat(c.provider()).isEqualTo(TlsProvider.AUTO);
    assertThat(c.protocols()).containsExactly("TLSv1.3", "TLSv1.2");
    assertThat(c.reloadCheckInterval()).isEqualTo(Duration.ofSeconds(30));
    assertThat(c.hasCertificate()).isFalse();
    assertThat(c.files()).isEmpty();
    assertThat(c.filesFingerprint()).isZero();
    assertThat(c.serverName()).isNull();
  }

  @Test
  void aMissingFileIsNamedAtBuild() {
    Path missing = dir.resolve("nope.pem");
    assertThatThrownBy(() -> TlsConfig.builder().trustedCertificates(missing).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("TLS trusted certificates file " + missing + " cannot be read");
    assertThatThrownBy(() -> TlsConfig.builder().keyCertChain(missing, missing).build())
        .hasMessage("TLS certificate chain file " + missing + " cannot be read");
  }

  @Test
  void aServerNeedsACertificate() throws Exception {
    assertThatThrownBy(() -> TlsConfig.builder().build().requireCertificate("the HTTP inbound"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("TLS for the HTTP inbound needs a certificate and key");
    TlsConfig c = TlsConfig.builder().keyCertChain(file("c.pem", "c"), file("k.pem", "k")).build();
    assertThat(c.requireCertificate("x")).isSameAs(c);
  }

  @Test
  void badOptionsAreRefused() {
    assertThatThrownBy(() -> TlsConfig.builder().reloadCheckInterval(Duration.ofSeconds(-1)))
        .hasMessage("reloadCheckInterval must be positive: PT-1S");
    assertThatThrownBy(() -> TlsConfig.builder().protocols())
        .hasMessage("protocols: at least one is needed");
    assertThat(TlsConfig.builder().reloadCheckInterval(Duration.ZERO).build().reloadCheckInterval())
        .isZero();
    assertThat(TlsConfig.builder().serverName("").build().serverName()).isNull();
  }

  @Test
  void theFingerprintFollowsTheFilesAndReloadCountsCalls() throws Exception {
    Path cert = file("c.pem", "cert");
    Path key = file("k.pem", "key");
    Path ca = file("ca.pem", "ca");
    TlsConfig c = TlsConfig.builder().keyCertChain(cert, key).trustedCertificates(ca).build();
    assertThat(c.files()).isEqualTo(List.of(cert, key, ca));
    long before = c.filesFingerprint();
    assertThat(c.filesFingerprint()).isEqualTo(before);
    Files.writeString(key, "a longer key");
    assertThat(c.filesFingerprint()).isNotEqualTo(before);
    long sized = c.filesFingerprint();
    Files.setLastModifiedTime(ca, FileTime.from(Instant.parse("2030-01-01T00:00:00Z")));
    assertThat(c.filesFingerprint()).isNotEqualTo(sized);
    long touched = c.filesFingerprint();
    Files.delete(ca);
    assertThat(c.filesFingerprint()).isNotEqualTo(touched);

    assertThat(c.generation()).isZero();
    c.reload();
    c.reload();
    assertThat(c.generation()).isEqualTo(2);
  }

  @Test
  void toStringNamesFilesNotSecrets() throws Exception {
    TlsConfig c =
        TlsConfig.builder()
            .keyCertChain(file("c.pem", "c"), file("k.pem", "k"))
            .keyPassword("hunter2")
            .trustedCertificates(file("ca.pem", "ca"))
            .clientAuth(ClientAuth.REQUIRE)
            .serverName("svc.internal")
            .build();
    assertThat(c.toString())
        .contains("certificateChain=" + dir.resolve("c.pem"))
        .contains("trustedCertificates=" + dir.resolve("ca.pem"))
        .contains("clientAuth=REQUIRE")
        .contains("serverName=svc.internal")
        .doesNotContain("hunter2")
        .doesNotContain("k.pem");
  }
}
