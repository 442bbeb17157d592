package io.yarpc.transport.grpc.internal;

import io.grpc.InternalMetadata;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;

/**
 * The inbound's limit on metadata entries per call ({@code InboundLimits.maxHeaderCount}), which
 * grpc-java has no setting for: a server interceptor put in front of every handler the server has —
 * procedures ({@link #guard(ServerCallHandler)}, the fallback registry's handler), health and reflection
 * ({@link #guard(ServerServiceDefinition)}) — so it runs for every call when the call starts, before
 * routing, metadata decoding or any handler. It wraps each handler once, not as a server-wide interceptor,
 * which grpc-java would wrap around the handler anew for every call. A call with more entries is closed
 * with {@code RESOURCE_EXHAUSTED}, the status grpc-java gives metadata over its size limit, and its
 * request is never read. The entries were already bounded in bytes by {@code
 * maxInboundMetadataSize} when grpc-java decoded them; counting them is one field read.
 */
public final class HeaderCountLimit implements ServerInterceptor {
  private static final ServerCall.Listener<Object> NOOP = new ServerCall.Listener<>() {};

  private final int maxHeaderCount;

  /**
   * A limit of {@code maxHeaderCount} entries: every header field but the HTTP/2 pseudo-headers, so
   * {@code content-type}, {@code te}, {@code user-agent} and {@code grpc-timeout} count too.
   */
  public HeaderCountLimit(int maxHeaderCount) {
    this.maxHeaderCount = maxHeaderCount;
  }

  /** {@code next} behind this limit (made once per handler, not per call). */
  public <Q, R> ServerCallHandler<Q, R> guard(ServerCallHandler<Q, R> next) {
    return (call, headers) -> interceptCall(call, headers, next);
  }

  /** Every method of {@code service} behind this limit. */
  public ServerServiceDefinition guard(ServerServiceDefinition service) {
    return ServerInterceptors.intercept(service, this);
  }

  @Override
  @SuppressWarnings("unchecked")
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    int count = InternalMetadata.headerCount(headers);
    if (count > maxHeaderCount) {
      call.close(
          Status.RESOURCE_EXHAUSTED.withDescription(
              "request metadata has "
                  + count
                  + " entries, more than the limit of "
                  + maxHeaderCount),
          new Metadata());
      return (ServerCall.Listener<Q>) NOOP;
    }
    return next.startCall(call, headers);
  }
}
