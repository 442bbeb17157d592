package io.yarpc.transport.http.internal;

import io.yarpc.transport.DeadlinePolicy;

/**
 * The limits and timeouts of one HTTP inbound, fixed when it is built.
 *
 * @param maxBodySize largest request body accepted, in bytes (larger: 413)
 * @param maxHeaderSize largest request line and header block, in bytes (larger: 431)
 * @param idleTimeoutNanos how long a connection may sit with no request in progress
 * @param readTimeoutNanos how long receiving one request may take, from its first byte to its last
 * @param http2 whether h2c (prior knowledge) is served next to HTTP/1.1
 * @param maxConcurrentStreams the HTTP/2 {@code SETTINGS_MAX_CONCURRENT_STREAMS} announced to clients
 * @param shutdownTimeoutNanos how long stop waits for in-flight requests
 * @param healthPath the path a {@code GET} or {@code HEAD} asks for the health status on, or {@code null}
 *     when the health check is off
 * @param deadlinePolicy what calls without a deadline, or with a distant one, are handled with
 */
public record InboundSettings(
    int maxBodySize,
    int maxHeaderSize,
    long idleTimeoutNanos,
    long readTimeoutNanos,
    boolean http2,
    long maxConcurrentStreams,
    long shutdownTimeoutNanos,
    String healthPath,
    DeadlinePolicy deadlinePolicy) {}
