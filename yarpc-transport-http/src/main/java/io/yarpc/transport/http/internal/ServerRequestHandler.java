package io.yarpc.transport.http.internal;

import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.timeout.IdleStateEvent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves YARPC requests arriving as Netty {@link HttpObject}s on one HTTP/1.1 connection (one handler per
 * connection) or one HTTP/2 stream (one handler per stream, fed by {@code Http2StreamFrameToHttpObjectCodec}),
 * by wiring together the parts that do the work:
 *
 * <ul>
 *   <li>{@link RequestReceiver} assembles each request and enforces the receive limits (413, 431, 400, 408);
 *   <li>{@link ChannelExchanges} orders the exchanges and decides when the channel closes:
 *       {@link Http1Exchanges} (in order, pipelining, keep-alive) or {@link Http2StreamExchange};
 *   <li>{@link CallServer} serves each exchange in its turn (health check, {@link RequestDecoder}, routing,
 *       the handler) and builds its answer;
 *   <li>this handler writes each answer, finishes the exchange, starts the next, and relays the channel's
 *       events (idle, drain, inactive: the current call is cancelled when its client goes away).
 * </ul>
 *
 * <p><b>Threads.</b> All state is confined to the channel's event loop; answers built on a handler's
 * thread hop onto it ({@link CallServer#completed}).
 *
 * <p><b>Ownership.</b> Each exchange is counted in ({@link InboundState#exchangeStarted()}) when received
 * and out exactly once when it is finished or dropped; finishing releases the body it still holds. Each
 * answer handed to {@link #write} is written (Netty releases it) or released here.
 */
public final class ServerRequestHandler extends ChannelInboundHandlerAdapter {
  private static final Logger log = LoggerFactory.getLogger(ServerRequestHandler.class);

  private final InboundState state;
  private final boolean http2;
  private final RequestReceiver receiver;
  private final CallServer calls;
  private ChannelHandlerContext ctx;
  private ChannelExchanges exchanges;

  /**
   * A handler for one HTTP/1.1 connection ({@code http2} false) or one HTTP/2 stream ({@code http2} true);
   * response bodies are allocated from {@code writeAllocator}.
   */
  public ServerRequestHandler(
      InboundState state,
      InboundSettings settings,
      ByteBufAllocator writeAllocator,
      boolean http2) {
    this.state = state;
    this.http2 = http2;
    this.receiver = new RequestReceiver(settings, http2, this::received);
    this.calls =
        new CallServer(
            state,
            settings.healthPath(),
            settings.deadlinePolicy(),
            writeAllocator,
            http2,
            new CallServer.Answers() {
              @Override
              public void write(Exchange ex, FullHttpResponse res) {
                ServerRequestHandler.this.write(ex, res);
              }

              @Override
              public void finish(Exchange ex) {
                ServerRequestHandler.this.finish(ex);
              }

              @Override
              public void abort(Exchange ex) {
                receiver.stop();
                ctx.close();
                ServerRequestHandler.this.finish(ex);
              }
            });
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
    this.exchanges =
        http2 ? new Http2StreamExchange(state) : new Http1Exchanges(state, ctx.channel());
    receiver.attach(ctx);
    calls.attach(ctx);
  }

  /** Starts the receive timer at the first byte of a request (HTTP/1.1: called by {@link ReadStartHandler}). */
  void requestBytesArrived() {
    receiver.requestBytesArrived();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    receiver.read(msg);
  }

  /** A request was received (or rejected while being received): counted in, served now or in its turn. */
  private void received(Exchange ex) {
    state.exchangeStarted();
    if (exchanges.offer(ex)) {
      calls.serve(ex);
    }
  }

  /** Writes {@code res} for the current exchange (on the event loop), then moves on to the next one. */
  private void write(Exchange ex, FullHttpResponse res) {
    if (!ctx.channel().isActive() || ex.isFinished()) {
      res.release();
      finish(ex);
      return;
    }
    boolean rejected = ex.rejection() != null;
    boolean closeAfter = exchanges.closeAfter(ex, res);
    if (closeAfter) {
      receiver.stop();
    }
    ctx.writeAndFlush(res)
        .addListener(
            (ChannelFutureListener)
                f -> {
                  if (closeAfter || !f.isSuccess()) {
                    receiver.stop();
                    if (f.isSuccess()) {
                      exchanges.close(ctx, rejected);
                    } else {
                      ctx.close();
                    }
                  }
                  finish(ex);
                });
  }

  /** The exchange is over (answered, or abandoned): count it out and start the next one. */
  private void finish(Exchange ex) {
    if (!ex.finish()) {
      return;
    }
    state.exchangeFinished();
    Exchange next = exchanges.finished(ex, receiver.isStopped());
    if (next != null) {
      calls.serve(next);
    }
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
    if (evt instanceof IdleStateEvent) {
      if (exchanges.isIdle() && !receiver.isReceiving()) {
        receiver.stop();
        ctx.close();
      }
      return;
    }
    if (evt == InboundState.DRAIN) {
      if (exchanges.drain(receiver.isReceiving())) {
        receiver.stop();
        ctx.close();
      }
      return;
    }
    ctx.fireUserEventTriggered(evt);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    receiver.close();
    Exchange ex = exchanges.current();
    if (ex != null) {
      if (ex.future() != null && !ex.future().isDone()) {
        ex.future()
            .cancel(
                false); // the handler's call is cancelled; a late response is released by the core
      } else if (ex.future() == null) {
        finish(ex);
      }
    }
    exchanges.dropWaiting();
    ctx.fireChannelInactive();
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    receiver.releaseReceived();
    exchanges.dropWaiting();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    log.debug("HTTP inbound connection {} failed: {}", ctx.channel(), cause.toString());
    receiver.stop();
    ctx.close();
  }
}
