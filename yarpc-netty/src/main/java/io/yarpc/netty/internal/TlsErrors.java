package io.yarpc.netty.internal;

import io.netty.handler.ssl.NotSslRecordException;
import io.netty.handler.ssl.SslHandshakeTimeoutException;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import java.nio.channels.ClosedChannelException;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.util.Locale;
import java.util.regex.Pattern;
import javax.net.ssl.SSLException;

/** Turns TLS failures into short reasons a person can act on, and handshake failures into errors. */
public final class TlsErrors {
  /** {@code javax.net.ssl.SSLHandshakeException: } and the like, inside a message. */
  private TlsErrors() {}

  /** Whether {@code t} (or a cause) is a TLS failure rather than a plain connection failure. */
  public static boolean isTls(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof SSLException
          || c instanceof java.security.cert.CertificateException
          || c instanceof CertPathValidatorException
          || c instanceof CertPathBuilderException) {
        return true;
      }
    }
    return false;
  }

  /**
   * The {@code unavailable} error a caller gets when the TLS handshake with {@code peer} failed: {@code TLS
   * handshake with peer 127.0.0.1:4040 failed: the server's certificate has expired (...)}.
   */
  public static YarpcException handshakeFailure(String peer, Throwable cause) {
    return YarpcException.withCause(
        Code.UNAVAILABLE, "TLS handshake with peer " + peer + " failed: " + describe(cause), cause);
  }

  /** The reason of a TLS failure, from its most telling cause. */
  public static String describe(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof CertificateExpiredException) {
        return "the certificate has expired (" + message(c) + ")";
      }
      if (c instanceof CertificateNotYetValidException) {
        return "the certificate is not yet valid (" + message(c) + ")";
      }
    }
    for (Throwable c = t; c != null; c = c.getCause()) {
      String m = message(c);
      String lower = m.toLowerCase(Locale.ROOT);
      if (c instanceof NotSslRecordException) {
        return "the other side did not answer with TLS (is it a plaintext port?)";
      }
      if (c instanceof SslHandshakeTimeoutException) {
        return "the handshake timed out";
      }
      if (c instanceof CertPathBuilderException
          || lower.contains("unable to find valid certification path")
          || lower.contains("pkix path")) {
        return "the certificate is not signed by a trusted root (" + m + ")";
      }
      if (lower.contains("no subject alternative") || lower.contains("no name matching")) {
        return "the certificate does not name the server (" + m + ")";
      }
      if (lower.contains("certificate_required")
          || lower.contains("empty client certificate chain")
          || lower.contains("peer_did_not_return_a_certificate")
          || lower.contains("peer sent no certificate")) {
        return "the server requires a client certificate and none was presented (" + m + ")";
      }
      if (lower.contains("unknown_ca")
          || lower.contains("bad_certificate")
          || lower.contains("certificate_unknown")) {
        return "the other side did not accept this side's certificate (" + m + ")";
      }
      if (lower.contains("certificate_expired")) {
        return "the other side says this side's certificate has expired (" + m + ")";
      }
      if (lower.contains("alert")) {
        return "the other side refused the handshake (" + m + ")";
      }
      if (c instanceof ClosedChannelException) {
        return "the connection closed during the handshake";
      }
    }
    Throwable root = t;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return message(root);
  }

  /**
   * Java class names inside a message ({@code javax.net.ssl.SSLHandshakeException: } from a wrapper's
   * message, {@code sun.security...SunCertPathBuilderException: } in the JDK's PKIX text): an error's text
   * may travel onward, class names must not.
   */
  private static final Pattern CLASS_NAME =
      Pattern.compile("\\b(?:[A-Za-z_$][\\w$]*\\.)+[A-Z][\\w$]*(?:Exception|Error)(?:: |$)");

  private static String message(Throwable t) {
    String m = t.getMessage();
    if (m == null || m.isEmpty()) {
      return t.getClass().getSimpleName();
    }
    // a wrapper's message is often its cause's toString(): keep the text, not the class name
    String cleaned = IoErrors.plain(CLASS_NAME.matcher(m).replaceAll(""));
    return cleaned.isEmpty() ? t.getClass().getSimpleName() : cleaned;
  }
}
