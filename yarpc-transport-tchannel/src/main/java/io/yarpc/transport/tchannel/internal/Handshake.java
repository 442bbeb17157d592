package io.yarpc.transport.tchannel.internal;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.util.concurrent.ScheduledFuture;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The init handshake of one {@link Connection} (docs/spec/wire-tchannel.md §2.1), in either role. The initiator
 * sends init req when the channel becomes active and waits for init res (an error frame instead is a
 * refusal); the acceptor waits for init req and answers init res with the same id. Both sides send all
 * five init headers; the version must be 2, and an init req must carry {@code host_port} and {@code
 * process_name}. The handshake must be done within {@link ConnectionLimits#handshakeTimeoutNanos()} of the
 * channel becoming active (or of the timer being {@linkplain #armTimer armed} earlier: an inbound arms it
 * on accept, so a TLS handshake counts too), or the future fails with {@code unavailable} and the channel
 * is closed.
 *
 * <p>Contract: {@link #start} is called once, when the channel is active and the connection handler is in
 * its pipeline (whichever comes last; {@link #armTimer} may come before); {@link #onFrame} with the frames
 * that arrive while the handshake {@link #isDone() is not done}; {@link #fail} when the connection ends
 * first (a fatal protocol error, the channel closing). On success the handshake tells the connection (which
 * starts its idle timer), then the host ({@link ConnectionHost#onHandshake}), and then completes {@link
 * #future()} with the connection.
 *
 * <p>Threads: everything but {@link #future()}, {@link #isDone()} and {@link #remoteHostPort()} (safe from
 * any thread) runs on the channel's event loop. Buffers: {@link #onFrame} reads the frame and never
 * releases it (the caller owns it); the init frames this side writes are handed to the channel.
 */
final class Handshake {
  private static final Logger log =
      LoggerFactory.getLogger(Connection.class); // the connection's log

  private enum Phase {
    WAITING,
    DONE,
    FAILED
  }

  private final boolean initiator;
  private final ConnectionHost host;
  private final Settings settings;
  private final long timeoutNanos;
  private final Connection connection;
  private final CompletableFuture<Connection> future = new CompletableFuture<>();
  private volatile Phase phase = Phase.WAITING;
  private volatile String remoteHostPort = "";
  private ChannelHandlerContext ctx;
  private ScheduledFuture<?> timer;

  /**
   * The handshake of {@code connection}.
   *
   * @param initiator whether this side dialled (sends init req) rather than accepted (answers it)
   * @param host where the init headers' values come from and whom to tell when the handshake is done
   * @param connection what {@link #future()} completes with and what the host is told about
   */
  Handshake(boolean initiator, ConnectionHost host, Connection connection) {
    this.initiator = initiator;
    this.host = host;
    this.settings = host.settings();
    this.timeoutNanos = host.limits().handshakeTimeoutNanos();
    this.connection = connection;
  }

  /** Completes when the handshake is done; fails when the connection ends before. */
  CompletableFuture<Connection> future() {
    return future;
  }

  /** Whether the init frames have been exchanged. */
  boolean isDone() {
    return phase == Phase.DONE;
  }

  /** The peer's advertised {@code host_port} (empty before the handshake). */
  String remoteHostPort() {
    return remoteHostPort;
  }

  /**
   * The channel is active: arms the handshake timer and, for the initiator, sends init req.
   *
   * @param ids gives the init req its message id (the first of this side's ids); not called by the acceptor
   */
  void start(ChannelHandlerContext ctx, IntSupplier ids) {
    this.ctx = ctx;
    armTimer(ctx.channel());
    if (initiator) {
      ctx.writeAndFlush(
          InitFrames.encode(
              settings.writeAllocator(), Frames.INIT_REQ, ids.getAsInt(), initHeaders()));
    }
  }

  /**
   * Arms the handshake timer on {@code ch}'s event loop, unless it is armed already: when it fires before
   * the handshake is done, the future fails with {@code unavailable} and {@code ch} is closed. {@link
   * #start} arms it; an inbound arms it earlier, when it accepts the connection, so that the time spent
   * before the connection handler joins the pipeline (the TLS handshake) counts too. The timer is
   * cancelled when the handshake ends or the channel closes.
   */
  void armTimer(Channel ch) {
    if (timer != null || phase != Phase.WAITING) {
      return;
    }
    ScheduledFuture<?> t =
        ch.eventLoop()
            .schedule(
                () -> {
                  if (phase == Phase.WAITING) {
                    future.completeExceptionally(
                        YarpcException.of(
                            Code.UNAVAILABLE,
                            "tchannel handshake with %s timed out",
                            ch.remoteAddress()));
                    ch.close();
                  }
                },
                timeoutNanos,
                TimeUnit.NANOSECONDS);
    timer = t;
    ch.closeFuture().addListener(f -> t.cancel(false));
  }

  /**
   * A frame that arrived before the handshake was done.
   *
   * @throws ProtocolException fatal when the frame is not the expected init frame or breaks its rules
   */
  void onFrame(ByteBuf frame) throws ProtocolException {
    int type = Frames.type(frame);
    if (!initiator) {
      if (type != Frames.INIT_REQ) {
        throw ProtocolException.fatal("expected init req, got " + Frames.typeName(type));
      }
      onInitReq(frame, Frames.id(frame));
      return;
    }
    if (type == Frames.ERROR) {
      String message = Frames.errorMessage(frame);
      future.completeExceptionally(
          YarpcException.of(
              Code.UNAVAILABLE,
              "tchannel peer %s refused the handshake: %s",
              ctx.channel().remoteAddress(),
              message));
      ctx.close();
      return;
    }
    if (type != Frames.INIT_RES) {
      throw ProtocolException.fatal("expected init res, got " + Frames.typeName(type));
    }
    onInitRes(frame);
  }

  /**
   * The connection ends (fatal protocol error, channel closed): the timer stops and, unless the handshake
   * was done, the future fails with {@code error}.
   */
  void fail(YarpcException error) {
    if (phase == Phase.WAITING) {
      phase = Phase.FAILED;
    }
    if (timer != null) {
      timer.cancel(false);
    }
    future.completeExceptionally(error);
  }

  private Map<String, String> initHeaders() {
    Map<String, String> h = new LinkedHashMap<>();
    h.put(InitFrames.HOST_PORT, host.localHostPort());
    h.put(InitFrames.PROCESS_NAME, settings.processName());
    h.put(InitFrames.LANGUAGE, "java");
    h.put(InitFrames.LANGUAGE_VERSION, System.getProperty("java.version", "unknown"));
    h.put(InitFrames.TCHANNEL_VERSION, Versions.LIBRARY);
    return h;
  }

  private void onInitReq(ByteBuf frame, int id) throws ProtocolException {
    InitFrames.Init init = InitFrames.decode(frame);
    if (init.version() != Frames.VERSION) {
      throw ProtocolException.fatal("unsupported protocol version " + init.version());
    }
    for (String required : new String[] {InitFrames.HOST_PORT, InitFrames.PROCESS_NAME}) {
      if (!init.headers().containsKey(required)) {
        throw ProtocolException.fatal("missing init frame header " + required);
      }
    }
    remoteHostPort = init.headers().get(InitFrames.HOST_PORT);
    ctx.writeAndFlush(
        InitFrames.encode(settings.writeAllocator(), Frames.INIT_RES, id, initHeaders()));
    activate();
  }

  private void onInitRes(ByteBuf frame) throws ProtocolException {
    InitFrames.Init init = InitFrames.decode(frame);
    if (init.version() != Frames.VERSION) {
      throw ProtocolException.fatal("unsupported protocol version " + init.version());
    }
    remoteHostPort = init.headers().getOrDefault(InitFrames.HOST_PORT, "");
    activate();
  }

  private void activate() {
    phase = Phase.DONE;
    if (timer != null) {
      timer.cancel(false);
    }
    connection.handshakeDone();
    try {
      host.onHandshake(connection);
    } catch (RuntimeException e) {
      log.warn("error after the handshake of {}", connection, e);
    }
    future.complete(connection);
  }
}
