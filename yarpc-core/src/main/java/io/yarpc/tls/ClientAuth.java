package io.yarpc.tls;

/** Whether a server asks for the client's certificate during the TLS handshake. */
public enum ClientAuth {
  /** No client certificate is requested (server-only TLS). */
  NONE,
  /**
   * A certificate is requested; a client without one is accepted (it has no identity), a client whose
   * certificate fails verification is refused.
   */
  OPTIONAL,
  /** Mutual TLS: a client without a certificate the trust roots verify is refused during the handshake. */
  REQUIRE
}
