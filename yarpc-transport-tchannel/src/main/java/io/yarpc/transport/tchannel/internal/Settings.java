package io.yarpc.transport.tchannel.internal;

import io.netty.buffer.ByteBufAllocator;

/**
 * What every connection of one transport shares, in either role (the limits a connection enforces on
 * its peer's calls depend on its role: {@link ConnectionLimits}).
 *
 * @param processName the init header {@code process_name}
 * @param writeAllocator the allocator of the frames this side writes (pooled direct memory)
 * @param maxMessageBytes the most arg bytes one received call res may carry
 * @param maxFrameSize the largest frame written (65535; smaller only in tests)
 */
public record Settings(
    String processName, ByteBufAllocator writeAllocator, long maxMessageBytes, int maxFrameSize) {}
