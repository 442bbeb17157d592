package io.yarpc.transport;

import static java.util.Objects.requireNonNull;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.security.cert.Certificate;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * The connection an inbound call arrived on: the addresses at both ends and, over TLS, the negotiated
 * session and the client's verified certificate. An inbound sets it on {@link RequestMeta#connection()};
 * authorization middleware reads {@link #peerSubject()} and {@link #peerSubjectAlternativeNames()}.
 *
 * <p>Only a certificate the server verified during the handshake appears here: a client that presented
 * none (server-only TLS, {@link io.yarpc.tls.ClientAuth#OPTIONAL}) or connected in plaintext (a {@link
 * io.yarpc.tls.TlsMode#PERMISSIVE} port) has no identity, so middleware that requires one must check
 * {@link #hasPeerCertificate()}.
 *
 * <p>Immutable (the certificate is read from the session on first use); thread-safe. A transport makes one
 * per connection and shares it among the connection's calls where it can.
 */
public final class ConnectionInfo {
  private final SocketAddress remoteAddress;
  private final SocketAddress localAddress;
  private final SSLSession session;
  private volatile Identity identity; // read from the session on first use

  private ConnectionInfo(SocketAddress remote, SocketAddress local, SSLSession session) {
    this.remoteAddress = remote;
    this.localAddress = local;
    this.session = session;
  }

  /** The client's certificate as read from the session, once. */
  private static final class Identity {
    static final Identity NONE = new Identity(List.of());

    final List<X509Certificate> certificates;
    final String subject;
    final List<String> sans;

    Identity(List<X509Certificate> certificates) {
      this.certificates = certificates;
      X509Certificate leaf = certificates.isEmpty() ? null : certificates.get(0);
      this.subject = leaf == null ? "" : leaf.getSubjectX500Principal().getName();
      this.sans = leaf == null ? List.of() : subjectAlternativeNames(leaf);
    }
  }

  private Identity identity() {
    Identity id = identity;
    if (id == null) {
      id = session == null ? Identity.NONE : new Identity(peerCertificates(session));
      identity = id; // a race makes an equal copy
    }
    return id;
  }

  /** A plaintext connection between these addresses (either may be {@code null} when unknown). */
  public static ConnectionInfo plaintext(SocketAddress remote, SocketAddress local) {
    return new ConnectionInfo(remote, local, null);
  }

  /** A TLS connection between these addresses with this negotiated session. */
  public static ConnectionInfo tls(SocketAddress remote, SocketAddress local, SSLSession session) {
    return new ConnectionInfo(remote, local, requireNonNull(session, "session"));
  }

  /** The client's address, or {@code null} when the transport does not know it. */
  public SocketAddress remoteAddress() {
    return remoteAddress;
  }

  /** The address the call arrived at, or {@code null} when the transport does not know it. */
  public SocketAddress localAddress() {
    return localAddress;
  }

  /** Whether the connection is TLS. */
  public boolean isTls() {
    return session != null;
  }

  /** The negotiated TLS session, or {@code null} over plaintext. */
  public SSLSession sslSession() {
    return session;
  }

  /** The negotiated TLS version ({@code TLSv1.3}), or empty over plaintext. */
  public String tlsProtocol() {
    return session == null ? "" : session.getProtocol();
  }

  /** The client's verified certificate chain, leaf first; empty when it presented none. */
  public List<X509Certificate> peerCertificates() {
    return identity().certificates;
  }

  /** Whether the client presented a certificate the server verified. */
  public boolean hasPeerCertificate() {
    return !identity().certificates.isEmpty();
  }

  /** The subject of the client's certificate in RFC 2253 form ({@code CN=billing,O=Example}), or empty. */
  public String peerSubject() {
    return identity().subject;
  }

  /**
   * The subject alternative names of the client's certificate, each as {@code TYPE:value} in OpenSSL's
   * spelling: {@code DNS:billing.example.com}, {@code URI:spiffe://example.com/billing}, {@code
   * IP Address:10.0.0.1}, {@code email:ops@example.com}. Empty without a certificate.
   */
  public List<String> peerSubjectAlternativeNames() {
    return identity().sans;
  }

  /** The client's remote host (IP address text), or empty when unknown. */
  public String remoteHost() {
    return remoteAddress instanceof InetSocketAddress
        ? ((InetSocketAddress) remoteAddress).getHostString()
        : "";
  }

  @Override
  public String toString() {
    StringBuilder s = new StringBuilder("ConnectionInfo{remote=").append(remoteAddress);
    if (session != null) {
      s.append(", tls=").append(session.getProtocol());
      if (!peerSubject().isEmpty()) {
        s.append(", peer=").append(peerSubject());
      }
    }
    return s.append('}').toString();
  }

  private static List<X509Certificate> peerCertificates(SSLSession session) {
    Certificate[] chain;
    try {
      chain = session.getPeerCertificates();
    } catch (SSLPeerUnverifiedException e) {
      return List.of();
    }
    List<X509Certificate> out = new ArrayList<>(chain.length);
    for (Certificate c : chain) {
      if (c instanceof X509Certificate) {
        out.add((X509Certificate) c);
      }
    }
    return Collections.unmodifiableList(out);
  }

  private static List<String> subjectAlternativeNames(X509Certificate cert) {
    Collection<List<?>> names;
    try {
      names = cert.getSubjectAlternativeNames();
    } catch (CertificateParsingException e) {
      return List.of();
    }
    if (names == null) {
      return List.of();
    }
    List<String> out = new ArrayList<>(names.size());
    for (List<?> n : names) {
      if (n.size() < 2 || !(n.get(1) instanceof String)) {
        continue; // otherName and other binary forms
      }
      String prefix = sanPrefix((Integer) n.get(0));
      if (prefix != null) {
        out.add(prefix + ":" + n.get(1));
      }
    }
    return Collections.unmodifiableList(out);
  }

  private static String sanPrefix(int type) {
    switch (type) {
      case 1:
        return "email";
      case 2:
        return "DNS";
      case 4:
        return "DirName";
      case 6:
        return "URI";
      case 7:
        return "IP Address";
      case 8:
        return "Registered ID";
      default:
        return null;
    }
  }
}
