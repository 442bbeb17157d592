/**
 * Implementation of the gRPC transport; not an API. The pieces: {@link
 * io.yarpc.transport.grpc.internal.BodyMarshaller} (zero-copy receive, drain-to-framer send), {@link
 * io.yarpc.transport.grpc.internal.Procedures} (procedure and path mapping), {@link
 * io.yarpc.transport.grpc.internal.Metadatas} and {@link io.yarpc.transport.grpc.internal.GrpcErrors} (the
 * wire metadata and status mapping), {@link io.yarpc.transport.grpc.internal.InboundHandler} (server calls)
 * and {@link io.yarpc.transport.grpc.internal.ClientCalls} (client calls), {@link
 * io.yarpc.transport.grpc.internal.GrpcPeer} (a peer and its channel), {@link
 * io.yarpc.transport.grpc.internal.HealthService} (gRPC health) and {@link
 * io.yarpc.transport.grpc.internal.RegisteredServices} (the router's services as health names and as
 * definitions for reflection).
 */
@Internal
package io.yarpc.transport.grpc.internal;

import io.yarpc.Internal;
