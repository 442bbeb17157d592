package io.yarpc.transport.http.internal;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpHeaders;

/**
 * A received HTTP response: status, headers and the aggregated content (see {@link
 * ReceivedContent}). Whoever holds it owns {@link #content()} and must release it once.
 */
public record ClientResponse(int status, HttpHeaders headers, ByteBuf content) {}
