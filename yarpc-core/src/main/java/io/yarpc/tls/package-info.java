/**
 * TLS for every transport: one {@link io.yarpc.tls.TlsConfig} describes a side's certificate, the roots it
 * trusts and whether it asks for the other side's certificate; each transport turns it into its own engine
 * (a Netty {@code SslContext}, grpc-java's server and channel builders) and negotiates ALPN itself.
 *
 * <p>An inbound takes a config with a {@link io.yarpc.tls.TlsMode}: {@code ENFORCED} accepts TLS only,
 * {@code PERMISSIVE} accepts TLS and plaintext on one port (for migrating a fleet, as yarpc-go's
 * {@code transport/tls} modes), {@code DISABLED} ignores the config. An outbound (a transport's client side)
 * takes a config for its TLS connections. The peer's verified certificate reaches inbound middleware as
 * {@link io.yarpc.transport.ConnectionInfo} on {@link io.yarpc.transport.RequestMeta#connection()}.
 */
package io.yarpc.tls;
