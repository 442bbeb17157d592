package io.yarpc.netty.internal;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.util.ReferenceCountUtil;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayList;
import java.util.List;

/**
 * Sits after a {@link SslHandler} until its handshake ends: it holds what arrives before the end (a TLS
 * 1.3 peer may send data in the same flight as its last handshake message), then tells its {@link
 * Listener}, which adds the handlers that follow (ALPN is settled by then, the peer's certificate
 * verified), hands the held messages on to them and leaves the pipeline. A failure (the handshake's, an
 * exception, the connection closing first) is reported once; the gate then closes the connection and
 * releases what it held. Used on the event loop of one connection; not thread-safe.
 */
public final class HandshakeGate extends ChannelDuplexHandler {
  /** What happens when the handshake ends. Called on the connection's event loop, at most once. */
  public interface Listener {
    /**
     * The handshake succeeded: add the handlers that follow the gate (at the end of the pipeline). To
     * refuse the connection after all (ALPN chose a protocol this side cannot use), throw: the exception
     * goes to {@link #failed}.
     */
    void succeeded(ChannelHandlerContext ctx, SslHandler ssl) throws Exception;

    /** The handshake failed (or the connection closed before its end); the gate closes the connection. */
    void failed(ChannelHandlerContext ctx, Throwable cause);
  }

  private final SslHandler ssl;
  private final Listener listener;
  private final List<Object> early = new ArrayList<>(1);
  private boolean done;

  /** A gate for {@code ssl}'s handshake. */
  public HandshakeGate(SslHandler ssl, Listener listener) {
    this.ssl = ssl;
    this.listener = listener;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    early.add(msg);
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
    if (!(evt instanceof SslHandshakeCompletionEvent)) {
      ctx.fireUserEventTriggered(evt);
      return;
    }
    SslHandshakeCompletionEvent completion = (SslHandshakeCompletionEvent) evt;
    if (!completion.isSuccess()) {
      fail(ctx, completion.cause());
      return;
    }
    if (done) {
      return;
    }
    done = true;
    try {
      listener.succeeded(ctx, ssl);
    } catch (Exception e) {
      done = false;
      fail(ctx, e);
      return;
    }
    for (Object m : early) {
      ctx.fireChannelRead(m);
    }
    early.clear();
    ctx.fireChannelReadComplete();
    ctx.pipeline().remove(this);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    // the TLS handler reports a failed handshake as an event too, with the same cause
    fail(ctx, cause);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    fail(ctx, new ClosedChannelException());
    ctx.fireChannelInactive();
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    for (Object m : early) {
      ReferenceCountUtil.release(m);
    }
    early.clear();
  }

  private void fail(ChannelHandlerContext ctx, Throwable cause) {
    if (done) {
      return;
    }
    done = true;
    listener.failed(ctx, cause);
    ctx.close();
  }
}
