/**
 * Opt-in, unsafe speed-ups of the protobuf encoding: {@link
 * io.yarpc.encoding.protobuf.unsafe.UnsafeAliasing} decodes with aliasing into pooled memory, so decoded
 * {@code bytes} fields are only valid until the call ends. Nothing here is used unless asked for by name.
 */
package io.yarpc.encoding.protobuf.unsafe;
