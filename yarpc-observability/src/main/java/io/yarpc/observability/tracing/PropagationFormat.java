package io.yarpc.observability.tracing;

/**
 * A way of writing trace context and baggage into request headers. Which ones an inbound accepts and which
 * ones an outbound writes are set on {@link YarpcTracing.Builder}; the headers travel as the request's
 * propagation headers ({@link io.yarpc.transport.RequestMeta#propagationHeaders()}), on each transport
 * where yarpc-go puts its tracer's headers.
 */
public enum PropagationFormat {
  /**
   * W3C Trace Context and W3C Baggage: {@code traceparent}, {@code tracestate} and {@code baggage}, what
   * OpenTelemetry SDKs, grpc-java's and most other instrumentation send by default.
   */
  W3C,

  /**
   * Jaeger's format, as yarpc-go's Jaeger tracer writes it: {@code uber-trace-id} ({@code
   * trace:span:parent:flags}) and one {@code uberctx-<key>} header per baggage item; reading also takes
   * {@code jaeger-baggage}. 64-bit trace ids from older Jaeger clients are read as 128-bit ids with a zero
   * high half.
   */
  JAEGER
}
