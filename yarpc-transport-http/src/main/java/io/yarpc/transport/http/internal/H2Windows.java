package io.yarpc.transport.http.internal;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http2.DefaultHttp2WindowUpdateFrame;
import io.netty.handler.codec.http2.Http2CodecUtil;

/**
 * HTTP/2 flow-control windows for both ends of an h2c connection. HTTP/2's defaults (64 KiB per stream and
 * per connection) make a 1 MiB body wait for about 30 window updates, and 64 concurrent streams share a
 * single 64 KiB connection window; gRPC runs with windows of this size for the same reason.
 */
final class H2Windows {
  /** The initial window of every stream, announced in SETTINGS. */
  static final int STREAM_WINDOW = 1 << 20;

  /** The window of the whole connection. */
  static final int CONNECTION_WINDOW = 16 << 20;

  private H2Windows() {}

  /**
   * Raises the connection window to {@link #CONNECTION_WINDOW}: a WINDOW_UPDATE on stream 0, written from
   * {@code ctx} (a handler after the frame codec) so the codec records it.
   */
  static void widenConnectionWindow(ChannelHandlerContext ctx) {
    ctx.writeAndFlush(new DefaultHttp2WindowUpdateFrame(
        CONNECTION_WINDOW - Http2CodecUtil.DEFAULT_WINDOW_SIZE));
  }
}
