/**
 * Observability for every call, as middleware plus a few transport facts: metrics through Micrometer with
 * yarpc-go's names and tags ({@code io.yarpc.observability.metrics}), one structured slf4j line per call
 * ({@code io.yarpc.observability.logging}), OpenTelemetry spans with context propagated over every
 * transport ({@code io.yarpc.observability.tracing}), and an optional admin listener with {@code
 * /metrics}, {@code /health} and the {@code /debug/yarpc} page ({@code io.yarpc.observability.admin}).
 * Nothing here runs unless it is installed on a dispatcher: without it, calls pay nothing.
 */
package io.yarpc.observability;
