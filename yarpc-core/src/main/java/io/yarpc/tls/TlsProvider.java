package io.yarpc.tls;

/** The TLS implementation a transport uses. */
public enum TlsProvider {
  /**
   * OpenSSL (BoringSSL through {@code netty-tcnative-boringssl-static}) when it is on the class path and
   * loads on this machine, the JDK's otherwise. The default.
   */
  AUTO,
  /** The JDK's {@code SSLEngine}; always available. */
  JDK,
  /** OpenSSL through netty-tcnative; starting a transport fails when it is not available. */
  OPENSSL
}
