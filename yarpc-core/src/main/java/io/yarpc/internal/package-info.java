/**
 * What every yarpc-java module shares and no application should use: the dispatcher's router and the call
 * paths in and out ({@link io.yarpc.internal.MapRouter}, {@link io.yarpc.internal.HandlerInvoker},
 * {@link io.yarpc.internal.OutboundInvoker}), the deadline timer ({@link io.yarpc.internal.Timers}), the
 * rules for text on the wire ({@link io.yarpc.internal.WireText}) and messages formatted as yarpc-go
 * formats them ({@link io.yarpc.internal.GoStrings}, {@link io.yarpc.internal.GoDurations}), and small
 * helpers ({@link io.yarpc.internal.Checks}, {@link io.yarpc.internal.Futures}, {@link
 * io.yarpc.internal.ByteBuffersInputStream}). Public only for the transports and encodings of this
 * project; not an API, may change without notice.
 */
@Internal
package io.yarpc.internal;

import io.yarpc.Internal;
