/**
 * The protobuf encodings of YARPC — binary ({@code "proto"}) and proto3 JSON ({@code "json"}) — and the
 * adapters that bring grpc-java's generated code to YARPC:
 *
 * <ul>
 *   <li>{@link io.yarpc.encoding.protobuf.ProtobufProcedures} serves a generated {@code XxxImplBase} (any
 *       {@code BindableService}) as YARPC procedures {@code pkg.Service::Method} over every transport;
 *   <li>{@link io.yarpc.encoding.protobuf.YarpcChannel} is an {@code io.grpc.Channel} over a YARPC
 *       {@code ClientConfig}, for generated blocking, future and async stubs;
 *   <li>{@link io.yarpc.encoding.protobuf.ProtobufCodec} reads and writes one message type as a body;
 *   <li>{@link io.yarpc.encoding.protobuf.ProtobufErrors} makes and reads errors with {@code
 *       google.rpc.Status} details.
 * </ul>
 *
 * <p><b>Bodies.</b> Decoding asks for byte access first: one heap view is parsed in place; direct or
 * several views are copied once into a reused per-thread array; only a body without byte access is read
 * through its stream (into the same array). Decoded messages never point into a body, so bodies can be
 * released as soon as they are decoded. Encoding makes lazy bodies of known length that serialise straight
 * into the transport's buffer. Ownership follows {@link io.yarpc.transport.Body}: inbound request bodies
 * stay the invocation's, received stream messages are released once decoded, response bodies are released
 * by the channel once decoded, bodies handed to transports are theirs.
 *
 * <p>Zero-copy aliasing of {@code bytes} fields into pooled memory is an explicit, unsafe opt-in: {@link
 * io.yarpc.encoding.protobuf.unsafe.UnsafeAliasing}. Implementation classes live in {@code internal} and
 * are not API.
 */
package io.yarpc.encoding.protobuf;
