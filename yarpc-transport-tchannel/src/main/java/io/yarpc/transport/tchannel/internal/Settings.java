package io.yarpc.transport.tchannel.internal;

import io.netty.buffer.ByteBufAllocator;

/**
 * What every connection of one transport shares.
 *
 * @param processName the init header {@code process_name}
 * @param writeAllocator the allocator of the frames this side writes (pooled direct memory)
 * @param maxMessageBytes the most arg bytes one received message may carry
 * @param maxInFlightCalls the most inbound calls one connection may have being received or handled
 * @param handshakeTimeoutNanos how long a connection may take to complete the init handshake
 * @param maxFrameSize the largest frame written (65535; smaller only in tests)
 */
public record Settings(
    String processName,
    ByteBufAllocator writeAllocator,
    long maxMessageBytes,
    int maxInFlightCalls,
    long handshakeTimeoutNanos,
    int maxFrameSize) {}
