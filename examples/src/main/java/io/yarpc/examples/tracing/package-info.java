/**
 * Example: OpenTelemetry tracing across the gateway's hops over HTTP, gRPC and TChannel, one trace from
 * the client to the last service ({@link io.yarpc.examples.tracing.TracingExample}).
 */
package io.yarpc.examples.tracing;
