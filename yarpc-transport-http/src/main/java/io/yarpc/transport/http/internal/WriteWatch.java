package io.yarpc.transport.http.internal;

import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Watches one answer being written and gives up on it when nothing of it has been written for {@code
 * InboundLimits.writeTimeout}: the peer does not read (a zero HTTP/2 flow-control window, a full socket).
 * Progress is a mark that changes whenever bytes leave (HTTP/1.1: the bytes still queued on the socket;
 * h2c: the bytes {@link WriteProgress} counted for the stream); it is looked at every quarter of the
 * timeout, so the give-up comes between one and one and a quarter timeouts after the last progress.
 *
 * <p>Started only for a write that did not complete at once (the common case costs nothing); stops when
 * the write completes. Event loop only.
 */
final class WriteWatch implements Runnable {
  private final ChannelHandlerContext ctx;
  private final ChannelFuture write;
  private final LongSupplier mark;
  private final long timeoutNanos;
  private final Runnable onTimeout;
  private long lastMark;
  private long lastProgress;
  private ScheduledFuture<?> timer;

  private WriteWatch(
      ChannelHandlerContext ctx,
      ChannelFuture write,
      LongSupplier mark,
      long timeoutNanos,
      Runnable onTimeout) {
    this.ctx = ctx;
    this.write = write;
    this.mark = mark;
    this.timeoutNanos = timeoutNanos;
    this.onTimeout = onTimeout;
  }

  /**
   * Watches {@code write} unless it is done already: {@code onTimeout} runs on the event loop if {@code
   * mark} stays the same for {@code timeoutNanos} before it completes.
   */
  static void watch(
      ChannelHandlerContext ctx,
      ChannelFuture write,
      LongSupplier mark,
      long timeoutNanos,
      Runnable onTimeout) {
    if (write.isDone()) {
      return;
    }
    WriteWatch w = new WriteWatch(ctx, write, mark, timeoutNanos, onTimeout);
    w.lastMark = mark.getAsLong();
    w.lastProgress = System.nanoTime();
    w.schedule(w.step());
    write.addListener(f -> w.cancel());
  }

  private long step() {
    return Math.max(TimeUnit.MILLISECONDS.toNanos(1), timeoutNanos / 4);
  }

  private void schedule(long delayNanos) {
    timer = ctx.executor().schedule(this, delayNanos, TimeUnit.NANOSECONDS);
  }

  private void cancel() {
    ScheduledFuture<?> t = timer;
    if (t != null) {
      t.cancel(false);
      timer = null;
    }
  }

  @Override
  public void run() {
    timer = null;
    if (write.isDone()) {
      return;
    }
    long now = System.nanoTime();
    long m = mark.getAsLong();
    if (m != lastMark) {
      lastMark = m;
      lastProgress = now;
    }
    long idle = now - lastProgress;
    if (idle >= timeoutNanos) {
      onTimeout.run();
    } else {
      schedule(Math.min(step(), timeoutNanos - idle));
    }
  }
}
