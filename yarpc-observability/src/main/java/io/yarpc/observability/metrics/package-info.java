/**
 * Metrics for every call through Micrometer, with yarpc-go's names, tags and caller/server
 * classification: {@link io.yarpc.observability.metrics.YarpcMetrics}, installed on a {@link
 * io.yarpc.Dispatcher.Builder}.
 */
package io.yarpc.observability.metrics;
