package io.yarpc.tls;

/**
 * Whether an inbound speaks TLS, as yarpc-go's {@code transport/tls} modes. The first bytes a client sends
 * tell a TLS handshake (a record of type 22) from plaintext, so one port can serve both.
 */
public enum TlsMode {
  /** Plaintext only; a TLS config given with this mode is ignored. */
  DISABLED,
  /**
   * TLS and plaintext on one port: each connection is sniffed and served as what it is. For moving a fleet
   * to TLS: turn servers permissive, then clients to TLS, then servers to {@link #ENFORCED}. A plaintext
   * connection has no verified identity.
   */
  PERMISSIVE,
  /** TLS only: a plaintext client is refused with the protocol's own answer where it has one. */
  ENFORCED
}
