package io.yarpc.transport.http.internal;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http2.DefaultHttp2WindowUpdateFrame;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.util.ReferenceCountUtil;
import java.util.Map;

/**
 * The first handler of an HTTP/2 stream's pipeline (the stream channel runs without Netty's automatic
 * flow control): it gives the stream's flow-control credit back, and checks the number of header
 * fields before the headers are turned into an HTTP request.
 *
 * <p><b>Credit.</b> Every DATA frame's bytes are owed back to the client as window. They are given back at
 * once while the connection's {@link ConnectionBudget} lets this stream receive; while it does not (the
 * stream is {@linkplain #pause() paused}), they are withheld, so the client can send no more than the
 * windows it has, until the budget lets it receive again or the bytes the stream holds are handed on or
 * dropped ({@link #released()}). A stream that closes gives back what it was owed (Netty's codec returns
 * a closed stream's bytes to the connection window).
 *
 * <p><b>Header fields.</b> A HEADERS frame (request headers or trailers) with more regular fields than
 * {@code InboundLimits.maxHeaderCount} is dropped and the request rejected with 431. Netty's HPACK decoder
 * bounds what it decodes by {@code SETTINGS_MAX_HEADER_LIST_SIZE}, which charges 32 bytes per field, so a
 * block never holds more than {@code maxHeaderBytes / 32} fields, and one block at a time.
 *
 * <p>Event loop only.
 */
final class Http2StreamFlow extends ChannelInboundHandlerAdapter
    implements ConnectionBudget.Receiver {
  private final ConnectionBudget budget;
  private final int maxHeaderCount;
  private ServerRequestHandler requests;
  private ChannelHandlerContext ctx;
  private int owed;
  private boolean withheld;
  private boolean unflushed;

  Http2StreamFlow(ConnectionBudget budget, int maxHeaderCount) {
    this.budget = budget;
    this.maxHeaderCount = maxHeaderCount;
  }

  /** The stream's request handler, told about a header block over the limit. */
  void requests(ServerRequestHandler requests) {
    this.requests = requests;
  }

  ConnectionBudget budget() {
    return budget;
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (msg instanceof Http2HeadersFrame h) {
      if (h.headers().size() > maxHeaderCount && regularFields(h.headers()) > maxHeaderCount) {
        ReferenceCountUtil.release(msg);
        requests.tooManyHeaders(maxHeaderCount);
        return;
      }
    }
    if (msg instanceof Http2DataFrame d) {
      owed += d.initialFlowControlledBytes();
    }
    ctx.fireChannelRead(msg);
    if (!withheld) {
      credit(false);
    }
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    if (unflushed) {
      unflushed = false;
      ctx.flush();
    }
    ctx.fireChannelReadComplete();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    budget.forget(this);
    owed = 0; // Netty's codec gives a closed stream's bytes back to the connection window
    ctx.fireChannelInactive();
  }

  @Override
  public void pause() {
    withheld = true;
  }

  @Override
  public void resume() {
    withheld = false;
    credit(true);
  }

  @Override
  public void released() {
    credit(true);
  }

  @Override
  public boolean isPaused() {
    return withheld;
  }

  private void credit(boolean flush) {
    if (owed <= 0 || ctx == null || !ctx.channel().isActive()) {
      return;
    }
    int n = owed;
    owed = 0;
    if (flush) {
      ctx.writeAndFlush(new DefaultHttp2WindowUpdateFrame(n));
    } else {
      ctx.write(new DefaultHttp2WindowUpdateFrame(n));
      unflushed = true;
    }
  }

  private static int regularFields(Http2Headers headers) {
    int n = 0;
    for (Map.Entry<CharSequence, CharSequence> e : headers) {
      if (!Http2Headers.PseudoHeaderName.hasPseudoHeaderFormat(e.getKey())) {
        n++;
      }
    }
    return n;
  }
}
