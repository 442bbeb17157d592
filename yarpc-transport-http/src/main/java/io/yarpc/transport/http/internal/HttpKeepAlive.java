package io.yarpc.transport.http.internal;

import io.netty.buffer.ByteBufUtil;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.GoDurations;
import io.yarpc.netty.internal.KeepAliveHandler;
import io.yarpc.transport.KeepAlive;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The keepalive of one {@link HttpPeer}'s connections ({@link KeepAlive}; yarpc-netty's {@link
 * KeepAliveHandler} keeps the time and closes a connection whose ping goes unanswered).
 *
 * <ul>
 *   <li>h2c and h2: an HTTP/2 {@code PING} frame on the connection; its ACK, like any frame, is read on
 *       the connection.
 *   <li>HTTP/1.1: a connection that carries a call cannot carry a ping, so the peer is {@linkplain #ask
 *       asked} on a connection of its own: {@code OPTIONS * HTTP/1.1} (RFC 9110, section 9.3.7: a request for the
 *       server as a whole, "a ping or no-op"), which every server answers somehow (yarpc's inbounds with a
 *       404: only {@code POST} is a call). Any byte back within the keepalive timeout proves the peer
 *       alive; one question at a time per peer, shared by the connections that wait for it.
 * </ul>
 *
 * With keepalive on, the same question is the peer's probe ({@link HttpPeer}), so a port that accepts
 * connections but never answers keeps the peer unavailable. Thread-safe.
 */
final class HttpKeepAlive {
  private static final AtomicLong PING_PAYLOADS = new AtomicLong();

  private final HttpPeer peer;
  private final PeerConnector connector;
  private final KeepAlive keepAlive;
  private final String noAnswer;
  private final Object lock = new Object();
  private CompletableFuture<Void> question; // guarded by lock: the one in flight, or the last one

  HttpKeepAlive(HttpPeer peer, PeerConnector connector, KeepAlive keepAlive) {
    this.peer = peer;
    this.connector = connector;
    this.keepAlive = keepAlive;
    this.noAnswer = "no answer to OPTIONS * within " + GoDurations.format(keepAlive.timeout());
  }

  /** Adds the keepalive to a new HTTP/1.1 connection, whose call handler is {@code calls}. */
  void installH1(ChannelPipeline p, ClientResponseHandler calls) {
    KeepAliveHandler.install(
        p,
        keepAlive,
        new KeepAliveHandler.Pinger() {
          @Override
          public boolean hasCalls() {
            return calls.hasCall();
          }

          @Override
          public CompletionStage<?> ping(Channel channel) {
            return ask();
          }
        });
  }

  /** Adds the keepalive to a new h2c or h2 connection, whose HTTP/2 handler is {@code calls}. */
  void installH2(ChannelPipeline p, Http2ClientHandler calls) {
    KeepAliveHandler.install(
        p,
        keepAlive,
        new KeepAliveHandler.Pinger() {
          @Override
          public boolean hasCalls() {
            return calls.hasCalls();
          }

          @Override
          public CompletionStage<?> ping(Channel channel) {
            calls.ping(PING_PAYLOADS.incrementAndGet());
            return null; // the ACK arrives on this connection
          }
        });
  }

  /**
   * Asks the peer {@code OPTIONS *} on a new connection, unless a question is in flight (then its
   * answer is shared). Completes at the first byte of an answer; fails with {@code unavailable} when the
   * connection cannot be opened, closes first, or nothing arrives within the keepalive timeout (counted
   * from the start, the connect and any TLS handshake included).
   */
  CompletableFuture<Void> ask() {
    CompletableFuture<Void> answer;
    synchronized (lock) {
      if (question != null && !question.isDone()) {
        return question;
      }
      answer = question = new CompletableFuture<>();
    }
    ChannelFuture connect;
    try {
      connect =
          connector.connect(
              false,
              p -> p.addLast("yarpc-question", new Answer(answer)),
              (ch, error) -> {
                if (error != null) {
                  answer.completeExceptionally(peer.connectionFailure(error));
                } else {
                  ch.writeAndFlush(ByteBufUtil.writeAscii(ch.alloc(), request()));
                }
              });
    } catch (RuntimeException e) { // the transport is not running, or no TLS context
      answer.completeExceptionally(e);
      return answer;
    }
    Channel ch = connect.channel();
    ScheduledFuture<?> timeout =
        ch.eventLoop()
            .schedule(
                () -> {
                  answer.completeExceptionally(YarpcException.of(Code.UNAVAILABLE, "%s", noAnswer));
                },
                keepAlive.timeout().toNanos(),
                TimeUnit.NANOSECONDS);
    answer.whenComplete(
        (v, e) -> {
          timeout.cancel(false);
          ch.close();
        });
    return answer;
  }

  private String request() {
    return "OPTIONS * HTTP/1.1\r\nHost: "
        + peer.authority()
        + "\r\nUser-Agent: yarpc-java\r\nConnection: close\r\n\r\n";
  }

  /** Completes the question at the first byte of an answer; the connection closing first fails it. */
  private final class Answer extends ChannelInboundHandlerAdapter {
    private final CompletableFuture<Void> answer;

    Answer(CompletableFuture<Void> answer) {
      this.answer = answer;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      ReferenceCountUtil.release(msg);
      answer.complete(null);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      answer.completeExceptionally(
          YarpcException.of(
              Code.UNAVAILABLE,
              "peer %s closed the connection without answering OPTIONS *",
              peer.identifier()));
      ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      answer.completeExceptionally(peer.connectionFailure(cause));
      ctx.close();
    }
  }
}
