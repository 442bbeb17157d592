/**
 * The implementation behind {@link io.yarpc.observability.metrics.YarpcMetrics}: the graph of edges (one
 * per distinct tag tuple, its meters created once and cached), yarpc-go's tag scrubbing, and the cap on
 * edges; the reader of a configuration file's {@code metrics} section. Not an API.
 */
@Internal
package io.yarpc.observability.metrics.internal;

import io.yarpc.Internal;
