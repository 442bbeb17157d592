/**
 * The gRPC transport: {@link io.yarpc.transport.grpc.GrpcTransport} (shared settings and the peers, one
 * grpc-java channel each), {@link io.yarpc.transport.grpc.GrpcInbound} (a gRPC server serving the
 * dispatcher's procedures) and {@link io.yarpc.transport.grpc.GrpcOutbound} (unary calls and streams to
 * chosen peers). Wire-compatible with yarpc-go's {@code grpc} transport and with plain gRPC peers.
 */
package io.yarpc.transport.grpc;
