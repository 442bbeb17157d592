package io.yarpc.transport.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.ssl.OpenSsl;
import io.yarpc.tls.TlsProvider;
import java.io.File;
import java.io.InputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;

/** What the TLS tests share: the providers to run with, raw JDK TLS clients, command-line tools. */
final class TlsTesting {
  private TlsTesting() {}

  /** The JDK's provider, and OpenSSL when netty-tcnative loads here. */
  static List<TlsProvider> providers() {
    return OpenSsl.isAvailable()
        ? List.of(TlsProvider.JDK, TlsProvider.OPENSSL)
        : List.of(TlsProvider.JDK);
  }

  /** OpenSSL when it loads here, else the JDK's. */
  static TlsProvider openSslIfAvailable() {
    return OpenSsl.isAvailable() ? TlsProvider.OPENSSL : TlsProvider.JDK;
  }

  /** The certificate in a PEM file. */
  static X509Certificate certificate(Path pem) throws Exception {
    try (InputStream in = Files.newInputStream(pem)) {
      return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
  }

  /** The serial number of the certificate in a PEM file. */
  static BigInteger serial(Path pem) throws Exception {
    return certificate(pem).getSerialNumber();
  }

  /** A JDK socket factory trusting only the CA certificate in {@code caPem}, without a certificate. */
  static SSLSocketFactory trusting(Path caPem) throws Exception {
    KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
    ks.load(null, null);
    ks.setCertificateEntry("ca", certificate(caPem));
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(ks);
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(null, tmf.getTrustManagers(), null);
    return ctx.getSocketFactory();
  }

  /** A handshaken TLS connection to {@code 127.0.0.1:port} offering ALPN {@code http/1.1}. */
  static SSLSocket connect(SSLSocketFactory factory, int port) throws Exception {
    return connect(factory, port, "http/1.1");
  }

  /** A handshaken TLS connection to {@code 127.0.0.1:port} offering {@code alpn} (none: no ALPN). */
  static SSLSocket connect(SSLSocketFactory factory, int port, String... alpn) throws Exception {
    SSLSocket s = (SSLSocket) factory.createSocket("127.0.0.1", port);
    s.setSoTimeout(10_000);
    javax.net.ssl.SSLParameters p = s.getSSLParameters();
    p.setApplicationProtocols(alpn);
    p.setEndpointIdentificationAlgorithm("HTTPS");
    s.setSSLParameters(p);
    s.startHandshake();
    return s;
  }

  /** The serial of the certificate the server presented on {@code s}. */
  static BigInteger serverSerial(SSLSocket s) throws Exception {
    return ((X509Certificate) s.getSession().getPeerCertificates()[0]).getSerialNumber();
  }

  /** Whether {@code tool} is on the PATH. */
  static boolean installed(String tool) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      if (Files.isExecutable(Path.of(dir, tool))) {
        return true;
      }
    }
    return false;
  }

  /** What a command printed (stdout and stderr), once it exited; its stdin is closed at once. */
  record Run(int exitCode, String output) {}

  static Run run(String... command) throws Exception {
    Process p =
        new ProcessBuilder(new ArrayList<>(List.of(command))).redirectErrorStream(true).start();
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("%s did not exit", command[0]).isTrue();
    return new Run(p.exitValue(), out);
  }
}
