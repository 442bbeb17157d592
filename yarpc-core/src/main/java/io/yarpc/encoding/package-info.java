/**
 * What all encodings share: {@link io.yarpc.encoding.EncodingErrors}, the errors and messages every
 * encoding reports. The encodings themselves live in subpackages ({@code raw}, {@code json}; protobuf in
 * its own module).
 *
 * <p>Body ownership for every encoding: an inbound request body belongs to the invocation (the dispatcher
 * releases it when the handler's future completes), so handlers decode it and never release it; a
 * response body a handler returns belongs to the transport; a response body a typed client receives is
 * released by that client once decoded, also on failure.
 */
package io.yarpc.encoding;
