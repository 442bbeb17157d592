package io.yarpc.transport.grpc.internal;

import io.grpc.InternalMetadata;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;

/**
 * The inbound's limit on metadata entries per call ({@code InboundLimits.maxHeaderCount}), which
 * grpc-java has no setting for: a server interceptor, so it runs for every call — procedures, health and
 * reflection — when the call starts, before routing, metadata decoding or any handler. A call with more
 * entries is closed with {@code RESOURCE_EXHAUSTED}, the status grpc-java gives metadata over its size
 * limit, and its request is never read. The entries were already bounded in bytes by {@code
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
