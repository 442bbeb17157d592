package io.yarpc.transport.http.internal;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpResponse;

/**
 * The order of the exchanges on one HTTP/1.1 connection and when it closes ({@link Http1Exchanges}:
 * answers in request order, pipelining, keep-alive). The {@link ServerRequestHandler} asks it what to do;
 * it serves nothing and writes nothing itself. (An h2c stream carries one exchange: {@link
 * Http2ServerStream} needs none of this.)
 *
 * <p><b>Threads.</b> Event loop only (like the handler), except that an exchange may be finished off the
 * loop once the loop has shut down.
 *
 * <p><b>Ownership.</b> Holds the exchanges waiting for their turn, and gives back what they hold when it
 * drops them ({@link Exchange#drop()}, counted out of {@link InboundState}). The current exchange belongs
 * to the handler.
 */
interface ChannelExchanges {
  /**
   * A received (or rejected) exchange, already counted in: true when it is to be served now (it becomes
   * the current one), false when it waits for its turn.
   */
  boolean offer(Exchange ex);

  /** The exchange being served, or null. */
  Exchange current();

  /** Whether no exchange is being served or waiting. */
  boolean isIdle();

  /**
   * Just before {@code ex}'s answer {@code res} is written: whether the channel closes once it is written
   * (always after a {@linkplain Exchange#rejection() rejection}); sets the headers that tell the client.
   */
  boolean closeAfter(Exchange ex, FullHttpResponse res);

  /**
   * Closes the channel once an answer that decided so is written. {@code rejected}: the answer rejected a
   * request whose client may still be sending.
   */
  void close(ChannelHandlerContext ctx, boolean rejected);

  /**
   * {@code ex} is over (already counted out): the exchange to serve next, now current, or null. When
   * {@code stopped} (no more requests on this channel) the waiting ones are dropped instead.
   */
  Exchange finished(Exchange ex, boolean stopped);

  /** Drops every waiting exchange. */
  void dropWaiting();

  /**
   * The inbound begins draining: true when the channel is to close now ({@code receiving}: part of a request
   * has arrived), false when it closes later or the connection decides.
   */
  boolean drain(boolean receiving);
}
