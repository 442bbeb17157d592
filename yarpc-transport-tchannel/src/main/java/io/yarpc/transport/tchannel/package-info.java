/**
 * The raw-TCP transport: TChannel protocol v2 on Netty, wire-compatible with tchannel-node, tchannel-go and
 * yarpc-go's {@code transport/tchannel}.
 *
 * <p>Public API: {@link io.yarpc.transport.tchannel.TChannelTransport} (event loops and peers, one
 * multiplexed connection per peer, usable in both directions), {@link
 * io.yarpc.transport.tchannel.TChannelInbound} (serves unary procedures), {@link
 * io.yarpc.transport.tchannel.TChannelOutbound} (sends unary calls to the peers a chooser picks) and {@link
 * io.yarpc.transport.tchannel.ChecksumType}. Oneway and streaming calls are not part of the protocol as
 * yarpc-go uses it and are refused. Everything in {@code internal} is implementation.
 */
package io.yarpc.transport.tchannel;
