package io.yarpc;

import io.yarpc.transport.Headers;

/**
 * A typed client's decoded response value together with the response headers.
 *
 * @param value the decoded value
 * @param headers the response's application headers (canonical lower-case keys)
 * @param <T> the value type
 */
public record Reply<T>(T value, Headers headers) {}
