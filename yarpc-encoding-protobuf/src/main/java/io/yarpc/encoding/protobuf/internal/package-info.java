/**
 * Implementation of the protobuf encoding and the grpc-java adapters: the decode paths, the grpc {@code
 * ServerCall}/{@code ClientCall} implementations over YARPC requests and streams, error and header
 * mapping. Public only for the module's other packages (and its benchmarks); not an API.
 */
@Internal
package io.yarpc.encoding.protobuf.internal;

import io.yarpc.Internal;
