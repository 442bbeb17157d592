package io.yarpc.netty.internal;

import static java.util.Objects.requireNonNull;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ServerChannel;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.ScheduledFuture;
import io.yarpc.internal.GoDurations;
import io.yarpc.transport.KeepAlive;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The keepalive of one connection a transport dialled, as {@link KeepAlive} describes it: after the
 * keepalive time with nothing read, it has the transport's {@link Pinger} send a ping (only while the
 * connection carries calls, unless {@link KeepAlive#withoutCalls()}); when nothing was read within the
 * timeout after the ping, it records why ({@link #failure(Channel)}) and closes the connection. The
 * transport then fails the connection's calls with {@code unavailable}, naming that reason, and reports
 * its peer unavailable, as for any connection that closed.
 *
 * <p>{@link #install} puts it first in the pipeline, nearest the socket, so that every byte read (TLS
 * records included) counts as a sign of life, whatever the handlers after it do with it. The transport
 * writes its own ping frame, through its codec; the answer is just more bytes read.
 *
 * <p>Confined to the channel's event loop: one timer at a time (for the next check, or the ping's
 * timeout), re-armed from the time of the last read, so a busy connection costs a clock read per socket
 * read and a timer every keepalive time. The clock is the event loop's {@linkplain
 * io.netty.util.concurrent.EventExecutor#ticker() ticker}.
 */
public final class KeepAliveHandler extends ChannelInboundHandlerAdapter {
  /** The name {@link #install} gives the handler in the pipeline. */
  public static final String NAME = "yarpc-keepalive";

  private static final Logger log = LoggerFactory.getLogger(KeepAliveHandler.class);
  private static final AttributeKey<String> FAILURE =
      AttributeKey.valueOf(KeepAliveHandler.class, "failure");

  /** What the transport does for a connection's keepalive; called on the connection's event loop. */
  public interface Pinger {
    /** Whether the connection carries calls now (in either direction, or waiting to start). */
    boolean hasCalls();

    /**
     * Sends one ping on {@code channel}. Returns null when the answer arrives on the connection itself
     * (any byte read counts), or a stage that completes when the ping was answered elsewhere (HTTP/1.1
     * asks on a connection of its own) and fails when it cannot be (the connection is then given up at
     * once). May skip the ping when the connection cannot carry one yet (before its handshake): the
     * timeout still runs.
     */
    CompletionStage<?> ping(Channel channel);
  }

  private final long timeNanos;
  private final long timeoutNanos;
  private final boolean withoutCalls;
  private final Pinger pinger;
  private final String reason;

  private ChannelHandlerContext ctx;
  private long lastRead;
  private boolean pinging;
  private boolean started;
  private ScheduledFuture<?> timer;

  private KeepAliveHandler(KeepAlive keepAlive, Pinger pinger) {
    this.timeNanos = keepAlive.time().toNanos();
    this.timeoutNanos = keepAlive.timeout().toNanos();
    this.withoutCalls = keepAlive.withoutCalls();
    this.pinger = pinger;
    this.reason = "no answer to a keepalive ping within " + GoDurations.format(keepAlive.timeout());
  }

  /**
   * Adds the keepalive of {@code keepAlive} first in {@code pipeline} (does nothing when {@code keepAlive}
   * is null: keepalive off). Call it from the channel's initializer or its event loop.
   */
  public static void install(ChannelPipeline pipeline, KeepAlive keepAlive, Pinger pinger) {
    requireNonNull(pinger, "pinger");
    if (keepAlive != null) {
      pipeline.addFirst(NAME, new KeepAliveHandler(keepAlive, pinger));
    }
  }

  /**
   * Why the keepalive closed {@code channel}'s connection (for a child channel, an HTTP/2 stream: its
   * parent's), such as {@code no answer to a keepalive ping within 500ms}; null when it did not.
   */
  public static String failure(Channel channel) {
    Channel c =
        channel.parent() != null && !(channel.parent() instanceof ServerChannel)
            ? channel.parent()
            : channel;
    return c.attr(FAILURE).get();
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
    if (ctx.channel().isActive()) {
      start();
    }
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    start();
    ctx.fireChannelActive();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    lastRead = now();
    if (pinging) {
      alive();
    }
    ctx.fireChannelRead(msg);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    stop();
    ctx.fireChannelInactive();
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    stop();
  }

  private void start() {
    if (started) {
      return;
    }
    started = true;
    lastRead = now();
    schedule(timeNanos);
  }

  private void stop() {
    started = false;
    if (timer != null) {
      timer.cancel(false);
      timer = null;
    }
  }

  private long now() {
    return ctx.executor().ticker().nanoTime();
  }

  private void schedule(long nanos) {
    timer = ctx.executor().schedule(this::check, nanos, TimeUnit.NANOSECONDS);
  }

  private void check() {
    timer = null;
    if (!started || !ctx.channel().isActive()) {
      return;
    }
    if (pinging) {
      giveUp(); // nothing arrived since the ping
      return;
    }
    long now = now();
    long idle = now - lastRead;
    if (idle < timeNanos) {
      schedule(timeNanos - idle);
      return;
    }
    if (!withoutCalls && !pinger.hasCalls()) {
      schedule(timeNanos); // nothing to protect now: look again later
      return;
    }
    pinging = true;
    schedule(timeoutNanos);
    CompletionStage<?> answer = pinger.ping(ctx.channel());
    if (answer != null) {
      answer.whenComplete((v, error) -> onEventLoop(() -> answered(error == null)));
    }
  }

  private void onEventLoop(Runnable task) {
    try {
      ctx.executor().execute(task);
    } catch (RejectedExecutionException e) {
      // the event loop is shutting down: the connection is closing anyway
    }
  }

  /** A ping answered elsewhere (or not): on the event loop. */
  private void answered(boolean ok) {
    if (!started || !pinging) {
      return;
    }
    if (ok) {
      lastRead = now();
      alive();
    } else {
      giveUp();
    }
  }

  /** The ping was answered (or something else arrived): the next one is due a keepalive time from now. */
  private void alive() {
    pinging = false;
    if (timer != null) {
      timer.cancel(false);
    }
    schedule(timeNanos);
  }

  private void giveUp() {
    pinging = false;
    stop();
    Channel ch = ctx.channel();
    ch.attr(FAILURE).set(reason);
    log.debug("{}: {}; closing the connection", ch, reason);
    // from here, nearest the socket: past handlers that would close gracefully (an HTTP/2 handler
    // sends GOAWAY and waits for the streams), which a dead connection cannot do
    ctx.close();
  }
}
