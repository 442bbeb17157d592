package io.yarpc.transport;

/**
 * Resources shared by a transport's inbounds and outbounds (event loops, connection pools, peers). The
 * dispatcher starts every transport before any outbound or inbound and stops it after them, once even when
 * several components share it.
 *
 * <p>An implementation MUST make {@code start} and {@code stop} idempotent ({@link AbstractLifecycle}
 * does) and MUST NOT start again once stopped. After {@code stop} returns it MUST hold no threads, sockets
 * or pooled buffers; what its components still do with it fails with {@code unavailable}. It MAY assume its
 * inbounds and outbounds are stopped before it is.
 */
public interface Transport extends Lifecycle {}
