package io.yarpc.transport.tchannel.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.yarpc.transport.DeadlinePolicy;
import io.yarpc.transport.Router;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A connection's surroundings without the connection handler, for testing its parts one by one: an
 * {@link EmbeddedChannel} (its clock moves only when the test says so), the context of a do-nothing
 * handler in it, a {@link FrameOutput} bound to that context, and a {@link ConnectionHost} that records
 * what it is told.
 */
final class EmbeddedParts implements ConnectionHost, AutoCloseable {
  static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;
  static final long HANDSHAKE_TIMEOUT_SECONDS = 2;

  final EmbeddedChannel channel = new EmbeddedChannel(new ChannelInboundHandlerAdapter());
  final ChannelHandlerContext ctx = channel.pipeline().firstContext();
  final FrameOutput out = new FrameOutput(ALLOC);
  final Settings settings;
  final ConnectionLimits limits;
  final List<Connection> handshakes = new ArrayList<>();
  Router router;

  EmbeddedParts(int maxInFlightCalls) {
    settings = new Settings("java[test]", ALLOC, 1 << 20, Frames.MAX_FRAME_SIZE);
    limits =
        new ConnectionLimits(
            maxInFlightCalls,
            1 << 20,
            256,
            64 << 10,
            TimeUnit.SECONDS.toNanos(HANDSHAKE_TIMEOUT_SECONDS),
            TimeUnit.SECONDS.toNanos(60),
            0,
            0,
            false,
            Long.MAX_VALUE,
            PendingBudget.UNLIMITED,
            DeadlinePolicy.strict());
    out.attach(ctx);
    channel.freezeTime();
  }

  EmbeddedParts() {
    this(16);
  }

  @Override
  public Settings settings() {
    return settings;
  }

  @Override
  public ConnectionLimits limits() {
    return limits;
  }

  @Override
  public Router router() {
    return router;
  }

  @Override
  public String localHostPort() {
    return "127.0.0.1:4040";
  }

  @Override
  public void onHandshake(Connection connection) {
    handshakes.add(connection);
  }

  /** The next frame written to the channel (the caller releases it), or null. */
  ByteBuf written() {
    return channel.readOutbound();
  }

  /** Moves the channel's clock and runs what became due. */
  void advance(long amount, TimeUnit unit) {
    channel.advanceTimeBy(amount, unit);
    channel.runPendingTasks();
    channel.runScheduledPendingTasks();
  }

  /** An error frame's code byte. */
  static int errorCode(ByteBuf frame) {
    return frame.getUnsignedByte(frame.readerIndex() + Frames.HEADER_SIZE);
  }

  @Override
  public void close() {
    channel.finishAndReleaseAll();
  }
}
