package io.yarpc.transport;

/**
 * Resources shared by a transport's inbounds and outbounds (event loops, connection pools, peers). The
 * dispatcher starts every transport before any outbound or inbound and stops it after them, once even when
 * several components share it.
 */
public interface Transport extends Lifecycle {}
