package io.yarpc.testing;

import io.yarpc.tls.ClientAuth;
import io.yarpc.tls.TlsConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A throwaway PKI made at test time with the {@code openssl} command line (the same commands the README
 * shows), so no long-lived key is committed: a test CA; a server certificate for {@code localhost} and
 * {@code 127.0.0.1}; a client certificate ({@code CN=test-client}, {@code URI:spiffe://yarpc.test/client});
 * an expired server certificate; and a second CA with a server and a client certificate the first CA does
 * not trust. Keys are EC P-256 in PKCS#8 PEM; certificates are valid for two days.
 *
 * <p>Make one per test class in a {@code @TempDir}; {@link #issue} makes more (for rotation tests).
 */
public final class TestCertificates {
  /** A certificate and its key, as PEM files. */
  public static final class Pair {
    private final Path certificate;
    private final Path key;

    Pair(Path certificate, Path key) {
      this.certificate = certificate;
      this.key = key;
    }

    /** The certificate (PEM). */
    public Path certificate() {
      return certificate;
    }

    /** The PKCS#8 private key (PEM). */
    public Path key() {
      return key;
    }
  }

  private final Path dir;
  private final Pair ca;
  private final Pair server;
  private final Pair client;
  private final Pair expiredServer;
  private final Pair otherCa;
  private final Pair untrustedServer;
  private final Pair untrustedClient;
  private final AtomicInteger serial = new AtomicInteger(100);

  private TestCertificates(Path dir) throws IOException {
    this.dir = dir;
    this.ca = authority("ca", "yarpc-test-ca");
    this.server = issue(ca, "server", "localhost", "DNS:localhost,IP:127.0.0.1,IP:::1");
    this.client =
        issue(ca, "client", "test-client", "URI:spiffe://yarpc.test/client,DNS:client.yarpc.test");
    this.expiredServer = expired(ca, "expired-server", "localhost", "DNS:localhost,IP:127.0.0.1");
    this.otherCa = authority("other-ca", "yarpc-untrusted-ca");
    this.untrustedServer =
        issue(otherCa, "untrusted-server", "localhost", "DNS:localhost,IP:127.0.0.1");
    this.untrustedClient = issue(otherCa, "untrusted-client", "intruder", "DNS:intruder.test");
  }

  /**
   * Generates the PKI in {@code dir}.
   *
   * @throws IllegalStateException when {@code openssl} is missing or fails
   */
  public static TestCertificates generate(Path dir) {
    try {
      return new TestCertificates(dir);
    } catch (IOException e) {
      throw new IllegalStateException("cannot generate test certificates in " + dir, e);
    }
  }

  /** The test CA's certificate: the trust root for every config made here. */
  public Path caCertificate() {
    return ca.certificate();
  }

  /** The server certificate ({@code CN=localhost}, SANs {@code localhost}, {@code 127.0.0.1}, {@code ::1}). */
  public Pair server() {
    return server;
  }

  /** The client certificate ({@code CN=test-client}, SAN {@code URI:spiffe://yarpc.test/client}). */
  public Pair client() {
    return client;
  }

  /** A server certificate from the test CA that expired in 2020. */
  public Pair expiredServer() {
    return expiredServer;
  }

  /** The certificate of a CA nobody here trusts. */
  public Path untrustedCaCertificate() {
    return otherCa.certificate();
  }

  /** A server certificate for {@code localhost} signed by the untrusted CA. */
  public Pair untrustedServer() {
    return untrustedServer;
  }

  /** A client certificate ({@code CN=intruder}) signed by the untrusted CA. */
  public Pair untrustedClient() {
    return untrustedClient;
  }

  /** A server config presenting {@link #server()}, trusting the test CA for client certificates. */
  public TlsConfig.Builder serverConfig(ClientAuth clientAuth) {
    return TlsConfig.builder()
        .keyCertChain(server.certificate(), server.key())
        .trustedCertificates(ca.certificate())
        .clientAuth(clientAuth);
  }

  /** A client config trusting the test CA, without a certificate of its own. */
  public TlsConfig.Builder clientConfig() {
    return TlsConfig.builder().trustedCertificates(ca.certificate());
  }

  /** A client config trusting the test CA and presenting {@link #client()}. */
  public TlsConfig.Builder mutualClientConfig() {
    return clientConfig().keyCertChain(client.certificate(), client.key());
  }

  /**
   * A new certificate from the test CA, in files named after {@code name}.
   *
   * @param sans OpenSSL {@code subjectAltName} text, e.g. {@code DNS:localhost,IP:127.0.0.1}
   */
  public Pair issue(String name, String commonName, String sans) {
    try {
      return issue(ca, name, commonName, sans);
    } catch (IOException e) {
      throw new IllegalStateException("cannot issue " + name, e);
    }
  }

  private Pair authority(String name, String cn) throws IOException {
    Pair p = files(name);
    openssl(
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-keyout",
        p.key().toString(),
        "-out",
        p.certificate().toString(),
        "-days",
        "2",
        "-subj",
        "/CN=" + cn,
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign");
    return p;
  }

  private Pair issue(Pair issuer, String name, String cn, String sans) throws IOException {
    Pair p = files(name);
    Path csr = request(p, name, cn);
    Path ext = extensions(name, sans);
    openssl(
        "x509",
        "-req",
        "-in",
        csr.toString(),
        "-CA",
        issuer.certificate().toString(),
        "-CAkey",
        issuer.key().toString(),
        "-set_serial",
        String.valueOf(serial.incrementAndGet()),
        "-days",
        "2",
        "-sha256",
        "-extfile",
        ext.toString(),
        "-out",
        p.certificate().toString());
    return p;
  }

  private Pair expired(Pair issuer, String name, String cn, String sans) throws IOException {
    Pair p = files(name);
    Path csr = request(p, name, cn);
    Path db = Files.createDirectories(dir.resolve(name + "-db"));
    Files.writeString(db.resolve("index.txt"), "");
    Files.writeString(db.resolve("serial"), "0" + serial.incrementAndGet() + "\n");
    Path conf = dir.resolve(name + "-ca.cnf");
    Files.writeString(
        conf,
        String.join(
            "\n",
            "[ca]",
            "default_ca=test",
            "[test]",
            "dir=" + db,
            "database=" + db.resolve("index.txt"),
            "new_certs_dir=" + db,
            "serial=" + db.resolve("serial"),
            "default_md=sha256",
            "policy=any",
            "x509_extensions=leaf",
            "[any]",
            "commonName=supplied",
            "[leaf]",
            "basicConstraints=CA:FALSE",
            "extendedKeyUsage=serverAuth,clientAuth",
            "subjectAltName=" + sans,
            ""),
        StandardCharsets.US_ASCII);
    openssl(
        "ca",
        "-batch",
        "-config",
        conf.toString(),
        "-cert",
        issuer.certificate().toString(),
        "-keyfile",
        issuer.key().toString(),
        "-in",
        csr.toString(),
        "-out",
        p.certificate().toString(),
        "-startdate",
        "20200101000000Z",
        "-enddate",
        "20200102000000Z");
    return p;
  }

  /** A new EC P-256 key in {@code p.key()} and a signing request for {@code CN=cn}; returns the request. */
  private Path request(Pair p, String name, String cn) throws IOException {
    Path csr = dir.resolve(name + ".csr");
    openssl(
        "req",
        "-new",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-keyout",
        p.key().toString(),
        "-out",
        csr.toString(),
        "-subj",
        "/CN=" + cn);
    return csr;
  }

  private Path extensions(String name, String sans) throws IOException {
    Path ext = dir.resolve(name + ".ext");
    Files.writeString(
        ext,
        "basicConstraints=CA:FALSE\n"
            + "keyUsage=critical,digitalSignature,keyEncipherment\n"
            + "extendedKeyUsage=serverAuth,clientAuth\n"
            + "subjectAltName="
            + sans
            + "\n",
        StandardCharsets.US_ASCII);
    return ext;
  }

  private Pair files(String name) {
    return new Pair(dir.resolve(name + ".pem"), dir.resolve(name + ".key"));
  }

  private void openssl(String... args) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add("openssl");
    cmd.addAll(Arrays.asList(args));
    Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    try {
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IOException("openssl " + args[0] + " did not finish");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    }
    if (p.exitValue() != 0) {
      throw new IOException("openssl " + String.join(" ", args) + " failed:\n" + out);
    }
  }
}
