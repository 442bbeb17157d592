package io.yarpc.tls;

import static java.util.Objects.requireNonNull;

import io.yarpc.internal.Checks;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManagerFactory;

/**
 * One side's TLS settings, given to any transport's inbound (the server side) or transport builder (the
 * client side): its own certificate chain and key, the roots it trusts to verify the other side, whether a
 * server asks for client certificates, and how the client checks the server's name. Protocol versions
 * default to TLS 1.3 and 1.2 and cipher suites to the provider's safe defaults; ALPN is the transport's
 * business ({@code h2} and {@code http/1.1} for HTTP, {@code h2} for gRPC).
 *
 * <p>Material comes from PEM files ({@link Builder#keyCertChain(Path, Path)}, {@link
 * Builder#trustedCertificates(Path)}) or from {@code javax.net.ssl} factories ({@link
 * Builder#keyManager(KeyManagerFactory)}, {@link Builder#trustManager(TrustManagerFactory)}). Without trust
 * roots, the JDK's default trust store is used.
 *
 * <p><b>Rotation.</b> Transports build their TLS context for new connections again when {@link #reload()} is
 * called, and when the PEM files' size or modification time changed, which they check at most once per
 * {@link Builder#reloadCheckInterval(Duration)} as connections are made. Open connections keep the session
 * they negotiated. A new set of files that cannot be read is reported in the log and the previous context
 * stays in use.
 *
 * <p>Immutable apart from the reload counter; thread-safe. One config may be given to any number of
 * transports.
 */
public final class TlsConfig {
  /** Protocol versions used when none are given. */
  public static final List<String> DEFAULT_PROTOCOLS = List.of("TLSv1.3", "TLSv1.2");

  private final Path certificateChain;
  private final Path privateKey;
  private final String keyPassword;
  private final KeyManagerFactory keyManager;
  private final Path trustedCertificates;
  private final TrustManagerFactory trustManager;
  private final ClientAuth clientAuth;
  private final String serverName;
  private final boolean hostnameVerification;
  private final TlsProvider provider;
  private final List<String> protocols;
  private final Duration reloadCheckInterval;
  private final AtomicLong generation = new AtomicLong();

  private TlsConfig(Builder b) {
    this.certificateChain = b.certificateChain;
    this.privateKey = b.privateKey;
    this.keyPassword = b.keyPassword;
    this.keyManager = b.keyManager;
    this.trustedCertificates = b.trustedCertificates;
    this.trustManager = b.trustManager;
    this.clientAuth = b.clientAuth;
    this.serverName = b.serverName;
    this.hostnameVerification = b.hostnameVerification;
    this.provider = b.provider;
    this.protocols = b.protocols;
    this.reloadCheckInterval = b.reloadCheckInterval;
  }

  /** A builder with the defaults stated on each method. */
  public static Builder builder() {
    return new Builder();
  }

  /** The PEM file holding this side's certificate chain (leaf first), or {@code null}. */
  public Path certificateChain() {
    return certificateChain;
  }

  /** The PEM file holding this side's PKCS#8 private key, or {@code null}. */
  public Path privateKey() {
    return privateKey;
  }

  /** The private key's password, or {@code null} when it is not encrypted. */
  public String keyPassword() {
    return keyPassword;
  }

  /** This side's key manager, or {@code null} when the key comes from PEM files or there is none. */
  public KeyManagerFactory keyManager() {
    return keyManager;
  }

  /** Whether this side has a certificate to present (required for a server). */
  public boolean hasCertificate() {
    return certificateChain != null || keyManager != null;
  }

  /** The PEM file of trusted root certificates, or {@code null}. */
  public Path trustedCertificates() {
    return trustedCertificates;
  }

  /** The trust manager, or {@code null} when roots come from a PEM file or the JDK's defaults. */
  public TrustManagerFactory trustManager() {
    return trustManager;
  }

  /** Whether a server asks for client certificates; {@link ClientAuth#NONE} by default. */
  public ClientAuth clientAuth() {
    return clientAuth;
  }

  /**
   * The name a client sends (SNI) and verifies the server's certificate against, or {@code null} for the
   * host of the address it connects to.
   */
  public String serverName() {
    return serverName;
  }

  /** Whether a client checks that the server's certificate names the server; on by default. */
  public boolean hostnameVerification() {
    return hostnameVerification;
  }

  /** The TLS implementation; {@link TlsProvider#AUTO} by default. */
  public TlsProvider provider() {
    return provider;
  }

  /** Enabled protocol versions, most preferred first. */
  public List<String> protocols() {
    return protocols;
  }

  /** How often new connections check whether the PEM files changed; {@link Duration#ZERO}: never. */
  public Duration reloadCheckInterval() {
    return reloadCheckInterval;
  }

  /**
   * Asks every transport using this config to build its TLS context again, from the files or factories it
   * names, before its next connection. Connections already open are not touched.
   */
  public void reload() {
    generation.incrementAndGet();
  }

  /** How many times {@link #reload()} was called: a transport rebuilds its context when this changes. */
  public long generation() {
    return generation.get();
  }

  /**
   * A value that changes when one of the PEM files changes (size or modification time); a file that cannot
   * be read counts as changed. Zero when the config names no files. For transports; cheap (a few {@code
   * stat} calls).
   */
  public long filesFingerprint() {
    long h = 0;
    for (Path p : files()) {
      h = 31 * h + p.hashCode();
      try {
        BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class);
        h = 31 * h + a.lastModifiedTime().toMillis();
        h = 31 * h + a.size();
      } catch (IOException e) {
        h = 31 * h - 1;
      }
    }
    return h;
  }

  /** The PEM files this config reads, in a fixed order. */
  public List<Path> files() {
    List<Path> out = new ArrayList<>(3);
    if (certificateChain != null) {
      out.add(certificateChain);
      out.add(privateKey);
    }
    if (trustedCertificates != null) {
      out.add(trustedCertificates);
    }
    return Collections.unmodifiableList(out);
  }

  /**
   * Checks that this config can serve as a server's: it has a certificate.
   *
   * @throws IllegalArgumentException naming what {@code who} (e.g. "the HTTP inbound") misses
   */
  public TlsConfig requireCertificate(String who) {
    if (!hasCertificate()) {
      throw new IllegalArgumentException(
          "TLS for "
              + who
              + " needs a certificate and key: set TlsConfig.Builder.keyCertChain or keyManager");
    }
    return this;
  }

  @Override
  public String toString() {
    StringBuilder s = new StringBuilder("TlsConfig{");
    if (certificateChain != null) {
      s.append("certificateChain=").append(certificateChain).append(", ");
    } else if (keyManager != null) {
      s.append("keyManager, ");
    }
    if (trustedCertificates != null) {
      s.append("trustedCertificates=").append(trustedCertificates).append(", ");
    } else if (trustManager != null) {
      s.append("trustManager, ");
    }
    s.append("clientAuth=").append(clientAuth);
    if (serverName != null) {
      s.append(", serverName=").append(serverName);
    }
    if (!hostnameVerification) {
      s.append(", hostnameVerification=false");
    }
    return s.append(", provider=").append(provider).append('}').toString();
  }

  /** Builds a {@link TlsConfig}; not thread-safe. */
  public static final class Builder {
    private Path certificateChain;
    private Path privateKey;
    private String keyPassword;
    private KeyManagerFactory keyManager;
    private Path trustedCertificates;
    private TrustManagerFactory trustManager;
    private ClientAuth clientAuth = ClientAuth.NONE;
    private String serverName;
    private boolean hostnameVerification = true;
    private TlsProvider provider = TlsProvider.AUTO;
    private List<String> protocols = DEFAULT_PROTOCOLS;
    private Duration reloadCheckInterval = Duration.ofSeconds(30);

    private Builder() {}

    /**
     * This side's certificate chain (PEM, leaf first, then intermediates) and PKCS#8 private key (PEM).
     * Replaces a {@link #keyManager}. None by default; a server needs one, a client needs one for mutual
     * TLS.
     */
    public Builder keyCertChain(Path certificateChainPem, Path privateKeyPem) {
      this.certificateChain = requireNonNull(certificateChainPem, "certificateChainPem");
      this.privateKey = requireNonNull(privateKeyPem, "privateKeyPem");
      this.keyManager = null;
      return this;
    }

    /** The password of an encrypted private key; none by default. */
    public Builder keyPassword(String password) {
      this.keyPassword = password;
      return this;
    }

    /** This side's key material as a JDK key manager. Replaces a {@link #keyCertChain}. */
    public Builder keyManager(KeyManagerFactory keyManager) {
      this.keyManager = requireNonNull(keyManager, "keyManager");
      this.certificateChain = null;
      this.privateKey = null;
      return this;
    }

    /**
     * Root certificates (PEM, one or more) that verify the other side: the server's for a client, client
     * certificates for a server that asks for them. Replaces a {@link #trustManager}. Default: the JDK's
     * trust store.
     */
    public Builder trustedCertificates(Path caCertificatesPem) {
      this.trustedCertificates = requireNonNull(caCertificatesPem, "caCertificatesPem");
      this.trustManager = null;
      return this;
    }

    /** Roots as a JDK trust manager. Replaces {@link #trustedCertificates}. */
    public Builder trustManager(TrustManagerFactory trustManager) {
      this.trustManager = requireNonNull(trustManager, "trustManager");
      this.trustedCertificates = null;
      return this;
    }

    /** Whether a server asks for client certificates; default {@link ClientAuth#NONE}. */
    public Builder clientAuth(ClientAuth clientAuth) {
      this.clientAuth = requireNonNull(clientAuth, "clientAuth");
      return this;
    }

    /**
     * The server name a client sends and verifies instead of the host it connects to (for connecting by IP
     * address to a server whose certificate names a host). Default: the peer's host.
     */
    public Builder serverName(String serverName) {
      this.serverName = serverName == null || serverName.isEmpty() ? null : serverName;
      return this;
    }

    /**
     * Whether a client checks the server certificate's names against the server name (the chain is
     * verified either way). On by default; turning it off lets any certificate the roots signed stand in
     * for any server.
     */
    public Builder hostnameVerification(boolean on) {
      this.hostnameVerification = on;
      return this;
    }

    /** The TLS implementation; default {@link TlsProvider#AUTO}. */
    public Builder provider(TlsProvider provider) {
      this.provider = requireNonNull(provider, "provider");
      return this;
    }

    /** Enabled protocol versions; default {@link #DEFAULT_PROTOCOLS}. */
    public Builder protocols(String... protocols) {
      if (protocols.length == 0) {
        throw new IllegalArgumentException("protocols: at least one is needed");
      }
      this.protocols = List.copyOf(Arrays.asList(protocols));
      return this;
    }

    /**
     * How often, at most, new connections check whether the PEM files changed; default 30 seconds, {@link
     * Duration#ZERO} turns the check off ({@link TlsConfig#reload()} still works).
     */
    public Builder reloadCheckInterval(Duration interval) {
      requireNonNull(interval, "interval");
      this.reloadCheckInterval =
          interval.isZero() ? Duration.ZERO : Checks.positive(interval, "reloadCheckInterval");
      return this;
    }

    /**
     * The config.
     *
     * @throws IllegalArgumentException when a named file is missing or unreadable
     */
    public TlsConfig build() {
      readable(certificateChain, "certificate chain");
      readable(privateKey, "private key");
      readable(trustedCertificates, "trusted certificates");
      return new TlsConfig(this);
    }

    private static void readable(Path p, String what) {
      if (p != null && !Files.isReadable(p)) {
        throw new IllegalArgumentException("TLS " + what + " file " + p + " cannot be read");
      }
    }
  }
}
