package io.yarpc.transport.http.internal;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The exchange of one HTTP/2 stream: a stream carries one request (the stream codec ends it after its last
 * frame), so there is nothing to order and no keep-alive to decide; the stream closes only after a
 * rejection or a failed write, and idle time and draining are the connection's business
 * ({@code Http2ConnectionEvents} sends GOAWAY). Answers keep the stream open for the codec to end it.
 *
 * <p><b>Threads.</b> Event loop only. <b>Ownership.</b> Holds no exchange but the current one, which belongs
 * to the handler: there is never one waiting to drop. (A second request on the stream, which the codec
 * never delivers, would be dropped at once: body released, counted out, never answered.)
 */
final class Http2StreamExchange implements ChannelExchanges {
  private static final Logger log = LoggerFactory.getLogger(Http2StreamExchange.class);

  private final InboundState state;
  private Exchange current;

  Http2StreamExchange(InboundState state) {
    this.state = state;
  }

  @Override
  public boolean offer(Exchange ex) {
    if (current != null) {
      // cannot happen: once a request's last frame is in, the HTTP/2 codec takes nothing more on
      // its stream
      log.warn("a second request on one HTTP/2 stream; dropped");
      ex.drop();
      state.exchangeFinished();
      return false;
    }
    current = ex;
    return true;
  }

  @Override
  public Exchange current() {
    return current;
  }

  @Override
  public boolean isIdle() {
    return current == null;
  }

  @Override
  public boolean closeAfter(Exchange ex, FullHttpResponse res) {
    return ex.rejection() != null;
  }

  @Override
  public void close(ChannelHandlerContext ctx, boolean rejected) {
    ctx.close(); // resets the stream if the client is still sending; other streams go on
  }

  @Override
  public Exchange finished(Exchange ex, boolean stopped) {
    if (current == ex) {
      current = null;
    }
    return null;
  }

  @Override
  public void dropWaiting() {
    // none wait
  }

  @Override
  public boolean drain(boolean receiving) {
    return false; // the connection sends GOAWAY and closes once its streams are done
  }
}
