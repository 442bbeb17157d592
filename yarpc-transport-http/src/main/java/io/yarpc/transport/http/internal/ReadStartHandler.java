package io.yarpc.transport.http.internal;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/**
 * Sits in front of the HTTP/1.1 decoder and tells the {@link ServerRequestHandler} when bytes of a
 * request arrive, so its receive timeout counts from a request's first byte (a client trickling header
 * bytes is cut off too), not from the end of its headers.
 */
final class ReadStartHandler extends ChannelInboundHandlerAdapter {
  private final ServerRequestHandler requests;

  ReadStartHandler(ServerRequestHandler requests) {
    this.requests = requests;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    requests.requestBytesArrived();
    ctx.fireChannelRead(msg);
  }
}
