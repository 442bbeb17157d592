/**
 * Implementation of the TChannel transport; not a public API. Codec: {@link
 * io.yarpc.transport.tchannel.internal.FrameDecoder} (frames as retained views of the reads, {@link
 * io.yarpc.transport.tchannel.internal.FramePieces}), {@link
 * io.yarpc.transport.tchannel.internal.CallFrame} (parsing), {@link
 * io.yarpc.transport.tchannel.internal.MessageAssembler} (the reader algorithm and its checks), {@link
 * io.yarpc.transport.tchannel.internal.MessageWriter} (the fragmentation writer rules), {@link
 * io.yarpc.transport.tchannel.internal.CallCodec} (the YARPC mapping). Runtime: {@link
 * io.yarpc.transport.tchannel.internal.Connection} (one connection in either role: owns the channel and
 * routes frames to its {@code Handshake}, {@code IncomingCalls} and {@code OutgoingCalls}, which write
 * through its {@code FrameOutput}) and {@link io.yarpc.transport.tchannel.internal.TChannelPeer}.
 */
@Internal
package io.yarpc.transport.tchannel.internal;

import io.yarpc.Internal;
