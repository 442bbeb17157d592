/**
 * The {@code yarpc.examples.keyvalue} protobuf service: the messages and grpc-java classes generated from
 * {@code src/main/proto/yarpc/examples/keyvalue.proto}, and {@link
 * io.yarpc.examples.keyvalue.KeyValueService}, a plain grpc-java implementation that YARPC serves over
 * every transport.
 */
package io.yarpc.examples.keyvalue;
