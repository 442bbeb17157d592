package io.yarpc.transport.http.internal;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

/**
 * The exchange queue of one HTTP/1.1 connection: answers go out in request order, one exchange is served
 * at a time, and while it is served at most one more (pipelined) request is received and waits, after
 * which reading stops ({@link ReadGate#QUEUED}) so that TCP pushes back on the client; reading resumes when
 * nothing waits. Decides keep-alive: the connection closes after an answer to a rejected request, to a
 * client that did not ask to keep it (HTTP/1.0 without {@code keep-alive}, {@code Connection: close}), or
 * once the inbound drains; HTTP/1.0 clients that keep it are told so. An idle connection closes at once
 * when the inbound drains, a busy one after its current answers.
 *
 * <p><b>Threads.</b> Event loop only (an exchange finished off the loop after it has shut down is the one
 * exception, as for the handler).
 *
 * <p><b>Ownership.</b> Owns the waiting exchanges (their received bodies) until they become current or are
 * dropped; dropping releases them and counts them out of the {@link InboundState}, once.
 */
final class Http1Exchanges implements ChannelExchanges {
  private static final long LINGER_NANOS = TimeUnit.SECONDS.toNanos(2);

  private final InboundState state;
  private final ReadGate gate;
  private final ArrayDeque<Exchange> queued = new ArrayDeque<>(2);
  private Exchange current;
  private boolean
      closeAfterResponse; // draining or too old: close once the current answers are written

  Http1Exchanges(InboundState state, ReadGate gate) {
    this.state = state;
    this.gate = gate;
  }

  @Override
  public boolean offer(Exchange ex) {
    if (current == null) {
      current = ex;
      return true;
    }
    queued.add(ex);
    gate.pause(ReadGate.QUEUED); // at most one request waits; TCP pushes back the rest
    return false;
  }

  @Override
  public Exchange current() {
    return current;
  }

  @Override
  public boolean isIdle() {
    return current == null && queued.isEmpty();
  }

  @Override
  public boolean closeAfter(Exchange ex, FullHttpResponse res) {
    boolean closeAfter =
        ex.rejection() != null || !ex.keepAlive() || closeAfterResponse || state.isDraining();
    if (closeAfter) {
      res.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
    } else if (res.protocolVersion().equals(HttpVersion.HTTP_1_0)) {
      HttpUtil.setKeepAlive(res, true);
    }
    return closeAfter;
  }

  @Override
  public void close(ChannelHandlerContext ctx, boolean rejected) {
    if (rejected) {
      lingerThenClose(ctx);
    } else {
      ctx.close();
    }
  }

  /**
   * Closes a connection whose client may still be sending (a rejected request): first only our side (FIN),
   * reading and discarding what still arrives for a while, so the client reads the answer instead of losing
   * it to a reset caused by unread data, as Go's server does.
   */
  private void lingerThenClose(ChannelHandlerContext ctx) {
    if (!(ctx.channel() instanceof SocketChannel)) {
      ctx.close();
      return;
    }
    gate.openForGood();
    ((SocketChannel) ctx.channel())
        .shutdownOutput()
        .addListener(
            f -> {
              if (!f.isSuccess()) {
                ctx.close();
              } else {
                ctx.executor()
                    .schedule(
                        () -> {
                          ctx.close();
                        },
                        LINGER_NANOS,
                        TimeUnit.NANOSECONDS);
              }
            });
  }

  @Override
  public Exchange finished(Exchange ex, boolean stopped) {
    if (current == ex) {
      current = null;
    }
    if (stopped) {
      dropWaiting();
      return null;
    }
    Exchange next = queued.poll();
    if (next != null) {
      current = next;
    } else {
      gate.resume(ReadGate.QUEUED);
    }
    return next;
  }

  @Override
  public void dropWaiting() {
    for (Exchange ex; (ex = queued.poll()) != null; ) {
      ex.drop();
      state.exchangeFinished();
    }
  }

  @Override
  public boolean drain(boolean receiving) {
    if (isIdle() && !receiving) {
      return true;
    }
    closeAfterResponse = true;
    return false;
  }
}
