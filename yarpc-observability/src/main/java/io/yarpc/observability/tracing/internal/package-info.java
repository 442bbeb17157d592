/**
 * Implementation of {@code io.yarpc.observability.tracing}: the span and propagation logic ({@link
 * io.yarpc.observability.tracing.internal.CallTracer}), the six middleware ({@link
 * io.yarpc.observability.tracing.internal.TracingMiddleware}) and the traced client stream. Not a public
 * API, may change without notice.
 */
@Internal
package io.yarpc.observability.tracing.internal;

import io.yarpc.Internal;
