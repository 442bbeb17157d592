package io.yarpc.transport.http.internal;

import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.yarpc.retry.Backoff;

/**
 * What the client side of a transport shares with its peers: event loops, allocators and the connection
 * settings.
 *
 * @param group the event loops connections run on
 * @param channelClass the socket channel implementation
 * @param receiveAllocator allocator of the connections (heap when the transport receives into heap)
 * @param receiveIntoHeap whether the connections receive into heap (see {@code HeapReads})
 * @param connectTimeoutMillis how long opening a connection may take
 * @param maxIdleConnectionsPerPeer how many idle HTTP/1.1 connections a peer keeps
 * @param idleConnectionTimeoutNanos how long an idle connection is kept
 * @param maxResponseHeaderSize largest response header block accepted
 * @param probeTimeoutMillis how long a peer availability probe (a plain TCP connect) may take (with
 *     keepalive, the probe is its question, bound by the keepalive timeout instead)
 * @param probeBackoff the delays between the probes of a peer that cannot be reached
 * @param tls the TLS contexts of {@code https} peers
 */
public record ClientContext(
    EventLoopGroup group,
    Class<? extends SocketChannel> channelClass,
    ByteBufAllocator receiveAllocator,
    boolean receiveIntoHeap,
    int connectTimeoutMillis,
    int maxIdleConnectionsPerPeer,
    long idleConnectionTimeoutNanos,
    int maxResponseHeaderSize,
    int probeTimeoutMillis,
    Backoff probeBackoff,
    OutboundTls tls) {}
