/**
 * What metrics and call logs share: the middleware that watches every call of a dispatcher ({@link
 * io.yarpc.observability.observer.internal.ObservingMiddleware}: unary, oneway and stream, inbound and
 * outbound), the facts it gathers about one call ({@link
 * io.yarpc.observability.observer.internal.ObservedCall}), yarpc-go's classification of how a call ended
 * ({@link io.yarpc.observability.observer.internal.Outcome}), and the interface the metrics and the call
 * logs implement to receive them ({@link io.yarpc.observability.observer.internal.CallObserver}). Not an
 * API.
 */
@Internal
package io.yarpc.observability.observer.internal;

import io.yarpc.Internal;
