package io.yarpc.transport.http.internal;

import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.timeout.IdleStateEvent;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves YARPC requests arriving as Netty {@link HttpObject}s on one HTTP/1.1 connection (one handler per
 * connection; h2c connections are {@link Http2ServerHandler}'s), by wiring together the parts that do the
 * work:
 *
 * <ul>
 *   <li>{@link RequestReceiver} assembles each request and enforces the receive limits (413, 414, 431, 400,
 *       408), counting the bytes it holds in the connection's {@link ConnectionBudget};
 *   <li>{@link ChannelExchanges} orders the exchanges and decides when the channel closes:
 *       {@link Http1Exchanges} (in order, pipelining, keep-alive);
 *   <li>{@link CallServer} serves each exchange in its turn (health check, {@link RequestDecoder}, routing,
 *       the handler) and builds its answer;
 *   <li>this handler writes each answer (giving up on it, and closing the connection or resetting the
 *       stream, when the client reads none of it for {@code InboundLimits.writeTimeout}: {@link
 *       WriteWatch}), finishes the exchange, starts the next, and relays the channel's events (idle, drain,
 *       maximum age, writability, inactive: the current call is cancelled when its client goes away). The
 *       connection stops reading while the client does not read our answers ({@link
 *       ReadGate#UNWRITABLE}).
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
  private final InboundSettings settings;
  private final RequestReceiver receiver;
  private final CallServer calls;
  private ChannelHandlerContext ctx;
  private ChannelExchanges exchanges;
  private ConnectionBudget budget;
  private ConnectionBudget.Receiver self;
  private ReadGate gate;
  private boolean handshaken; // a first request (or a failed one) has been decoded

  /** A handler for one HTTP/1.1 connection; response bodies are allocated from {@code writeAllocator}. */
  public ServerRequestHandler(
      InboundState state, InboundSettings settings, ByteBufAllocator writeAllocator) {
    this.state = state;
    this.settings = settings;
    this.receiver = new RequestReceiver(settings, false, this::received);
    this.calls =
        new CallServer(
            state,
            settings.healthPath(),
            settings.deadlinePolicy(),
            writeAllocator,
            false,
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

              @Override
              public void refuse(Exchange ex) {
                abort(ex); // HTTP/2 only: HTTP/1.1 answers refusals with their error
              }
            });
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
    this.gate = new ReadGate(ctx.channel());
    this.exchanges = new Http1Exchanges(state, gate);
    this.budget =
        new ConnectionBudget(
            state.pending(), settings.limits().maxPendingBytesPerConnection(), ctx.executor());
    this.self = new Http1Receiver(gate);
    if (!ctx.channel().isWritable()) {
      gate.pause(ReadGate.UNWRITABLE);
    }
    receiver.attach(ctx, budget, self);
    calls.attach(ctx);
  }

  /** Starts the receive timer at the first byte of a request (called by {@link ReadStartHandler}). */
  void requestBytesArrived() {
    receiver.requestBytesArrived();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (!handshaken) {
      handshaken = true;
      ConnectionTimers.handshakeDone(ctx.channel());
    }
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
    ChannelFuture written =
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
    WriteWatch.watch(
        ctx, written, this::http1WriteMark, settings.writeTimeoutNanos(), this::writeTimedOut);
  }

  /** The bytes still queued on the socket, which change as the client reads. */
  private long http1WriteMark() {
    ChannelOutboundBuffer out = ctx.channel().unsafe().outboundBuffer();
    return out == null ? -1 : out.totalPendingWriteBytes();
  }

  /** Nothing of the answer was written for the write timeout: the client does not read. */
  private void writeTimedOut() {
    log.debug(
        "HTTP inbound {}: the client read nothing of an answer for {} ms; {}",
        ctx.channel(),
        TimeUnit.NANOSECONDS.toMillis(settings.writeTimeoutNanos()),
        "closing the connection");
    receiver.stop();
    ctx.close();
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
    if (evt == InboundState.DRAIN || evt == InboundState.MAX_AGE) {
      if (exchanges.drain(receiver.isReceiving())) {
        receiver.stop();
        ctx.close();
      }
      return;
    }
    ctx.fireUserEventTriggered(evt);
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    if (gate != null) {
      if (ctx.channel().isWritable()) {
        gate.resume(ReadGate.UNWRITABLE);
      } else {
        gate.pause(
            ReadGate.UNWRITABLE); // the client does not read our answers: read no more requests
      }
    }
    ctx.fireChannelWritabilityChanged();
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
    budget.close();
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

  /** An HTTP/1.1 connection as a receiver of its budget: paused by not reading. */
  private static final class Http1Receiver implements ConnectionBudget.Receiver {
    private final ReadGate gate;

    Http1Receiver(ReadGate gate) {
      this.gate = gate;
    }

    @Override
    public void pause() {
      gate.pause(ReadGate.BUDGET);
    }

    @Override
    public void resume() {
      gate.resume(ReadGate.BUDGET);
    }

    @Override
    public boolean isPaused() {
      return gate.isPaused();
    }
  }
}
