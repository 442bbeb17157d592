/**
 * OpenTelemetry tracing for YARPC calls: {@link io.yarpc.observability.tracing.YarpcTracing} installs
 * middleware that records one span per inbound and outbound call (unary, oneway, stream) through the
 * OpenTelemetry API and carries the trace context in the requests' propagation headers, which every
 * transport puts where yarpc-go does (HTTP headers, gRPC metadata, TChannel {@code $tracing$} headers);
 * {@link io.yarpc.observability.tracing.PropagationFormat} names the formats (W3C Trace Context and
 * Baggage, Jaeger). Bring your own SDK: this package depends on the API only, and records nothing until an
 * SDK is configured.
 */
package io.yarpc.observability.tracing;
