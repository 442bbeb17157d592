/**
 * The YARPC HTTP transport, wire-compatible with yarpc-go's {@code transport/http}
 * (docs/spec/wire-http.md): {@link io.yarpc.transport.http.HttpTransport} owns the event loops and the peers,
 * {@link io.yarpc.transport.http.HttpInbound} serves HTTP/1.1 and h2c on one port, and
 * {@link io.yarpc.transport.http.HttpOutbound} calls the peers its chooser picks over HTTP/1.1 (keep-alive
 * pool per peer) or h2c (one multiplexed connection per peer). Both speak TLS too ({@link
 * io.yarpc.tls.TlsConfig}): the inbound with ALPN {@code h2} and {@code http/1.1}, enforced or permissive,
 * with mutual TLS when its config asks for client certificates; the outbound to {@code https://} peers.
 *
 * <p>Choices worth knowing:
 *
 * <ul>
 *   <li><b>Transport names.</b> As in yarpc-go: requests received over HTTP/1.1 carry {@code http},
 *       over HTTP/2 {@code http2}; an HTTP/1.1 outbound is named {@code http}, an h2c one {@code http2}.
 *   <li><b>No copies on receive.</b> Received bodies are byte access over the buffers Netty read (the
 *       chunks of a message aggregated in a composite), by default heap buffers so decoders get arrays and
 *       parse in place; released exactly once by whoever owns the body (see {@link io.yarpc.transport.Body}).
 *       Bodies sent are written straight from the {@code Body} into one pooled direct buffer.
 *   <li><b>Errors on the wire</b> follow yarpc-go: {@code Rpc-Error-Code} and the status table of
 *       docs/spec/model.md §2.4, a {@code text/plain} message body with a trailing newline, or the
 *       both-response-error form when the client asks for it (this outbound always does).
 *   <li><b>Limits</b> of the inbound (body 413, headers 431, malformed 400, receive time 408) answer with
 *       YARPC error headers too, so clients see {@code resource-exhausted}, {@code invalid-argument} or
 *       {@code deadline-exceeded}.
 *   <li><b>Connection identity.</b> Every inbound call carries its {@link
 *       io.yarpc.transport.ConnectionInfo} ({@code RequestMeta.connection()}): addresses, TLS session, the
 *       client's verified certificate subject and SANs, for authorization middleware.
 *   <li><b>Retries.</b> Only requests the server provably did not process are sent again: a write that
 *       failed on a reused HTTP/1.1 connection, an HTTP/2 stream refused or above a GOAWAY's last stream.
 * </ul>
 *
 * <p>Everything in {@code io.yarpc.transport.http.internal} is an implementation detail.
 */
package io.yarpc.transport.http;
