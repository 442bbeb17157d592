/**
 * What the Netty-based transports share: TLS contexts built from {@link io.yarpc.tls.TlsConfig} and rebuilt
 * when their files change ({@link io.yarpc.netty.internal.ReloadingSslContext}), the server side's TLS front
 * with permissive sniffing ({@link io.yarpc.netty.internal.ServerTls}), the client side's handler ({@link
 * io.yarpc.netty.internal.ClientTls}), the handler that holds a connection until its handshake ends
 * ({@link io.yarpc.netty.internal.HandshakeGate}), readable handshake failures ({@link
 * io.yarpc.netty.internal.TlsErrors}) logged at most once a second ({@link
 * io.yarpc.netty.internal.RateLimitedLog}), the {@link io.yarpc.transport.ConnectionInfo} of a
 * channel ({@link io.yarpc.netty.internal.Connections}), the keepalive of a dialled connection
 * ({@link io.yarpc.netty.internal.KeepAliveHandler}), reads landing in heap under native I/O ({@link
 * io.yarpc.netty.internal.HeapReads}), frame decoders' cumulation without copying large reads
 * ({@link io.yarpc.netty.internal.FrameCumulator}), and the rules an HTTP/1.x request head must meet
 * ({@link io.yarpc.netty.internal.Http1Heads}).
 *
 * <p>Not a public API: used by yarpc-java's transports, may change without notice.
 */
@Internal
package io.yarpc.netty.internal;

import io.yarpc.Internal;
