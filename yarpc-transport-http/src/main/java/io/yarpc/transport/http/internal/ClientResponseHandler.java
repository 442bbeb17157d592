package io.yarpc.transport.http.internal;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.netty.internal.IoErrors;
import io.yarpc.netty.internal.KeepAliveHandler;

/**
 * Sends the current {@link ClientCall}'s request on its HTTP/1.1 connection (one call at a time) and
 * receives its response: gathers the content chunks ({@link ReceivedContent}, which keeps the received
 * buffers), enforces the response body limit, and settles the call. The connection goes back to its peer's
 * pool when the exchange ended cleanly, before the caller hears of the response. Everything received that
 * nobody takes is released here. Confined to the channel's event loop. (HTTP/2 calls: {@link
 * Http2ClientHandler}.)
 *
 * <p>An attempt that provably did not reach the server is retried (see {@link ClientCall}): a write that
 * failed on a reused connection (the server closed it while idle).
 */
final class ClientResponseHandler extends ChannelInboundHandlerAdapter {
  private final HttpPeer peer;

  private Channel channel;
  private ClientCall current;
  private boolean reused; // the current attempt runs on a connection that served calls before
  private boolean writing; // the current attempt's request write has not completed yet
  private boolean received; // any response byte for the current attempt
  private HttpResponse head;
  private ReceivedContent content;
  private boolean keepAlive;

  ClientResponseHandler(HttpPeer peer) {
    this.peer = peer;
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    channel = ctx.channel();
  }

  /** Whether a call is on this connection now (event loop). */
  boolean hasCall() {
    return current != null;
  }

  /** Sends {@code call} on this channel (called on its event loop); {@code reused}: see the class comment. */
  void start(ClientCall call, boolean reused) {
    FullHttpRequest request = call.attempt();
    if (request == null) { // settled (cancelled) meanwhile
      peer.releaseH1(channel, true);
      return;
    }
    if (!channel.isActive()) {
      request.release();
      retryOrFail(call, reused, null);
      return;
    }
    current = call;
    this.reused = reused;
    writing = true;
    received = false;
    head = null;
    keepAlive = HttpUtil.isKeepAlive(request);
    call.attach(channel::close);
    channel
        .writeAndFlush(request)
        .addListener(
            (ChannelFutureListener)
                f -> {
                  writing = false;
                  if (current != call) {
                    return; // the attempt already ended (response, abort)
                  }
                  if (!f.isSuccess()) {
                    attemptEnded(f.cause());
                    channel.close();
                  } else if (!channel.isActive()) {
                    attemptEnded(null); // the channel closed while we were writing
                  }
                });
  }

  /** The current attempt ended without a response: retry it if that is safe, else fail the call. */
  private void attemptEnded(Throwable cause) {
    ClientCall call = current;
    current = null;
    releaseContent();
    if (call == null || call.isSettled()) {
      return;
    }
    boolean safeToRetry = !received && reused && cause != null;
    if (safeToRetry && call.mayRetry()) {
      peer.sendOnNewConnection(call);
      return;
    }
    String keepAliveFailure = KeepAliveHandler.failure(channel);
    YarpcException error =
        keepAliveFailure != null
            ? YarpcException.of(
                Code.UNAVAILABLE,
                "connection to peer %s closed: %s",
                peer.identifier(),
                keepAliveFailure)
            : cause != null
                ? peer.connectionFailure(cause)
                : YarpcException.of(
                    Code.UNAVAILABLE,
                    "connection to peer %s closed before the response was complete",
                    peer.identifier());
    call.fail(safeToRetry ? error.withUnprocessed() : error);
    peer.disconnected();
  }

  private void retryOrFail(ClientCall call, boolean reused, Throwable cause) {
    if (reused) {
      peer.resendUnsent(call, cause);
    } else {
      call.failUnprocessed(peer.connectionFailure(cause)); // nothing was written
    }
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    ClientCall call = current;
    if (!(msg instanceof HttpObject) || call == null) {
      ReferenceCountUtil.release(msg);
      if (call == null && msg instanceof HttpObject) {
        ctx.close(); // a response nobody asked for: the connection is out of step
      }
      return;
    }
    DecoderResult result = ((HttpObject) msg).decoderResult();
    if (result.isFailure()) {
      received = true;
      ReferenceCountUtil.release(msg);
      abort(
          YarpcException.of(
              Code.UNKNOWN,
              "malformed HTTP response from peer %s: %s",
              peer.identifier(),
              IoErrors.describe(result.cause())));
      return;
    }
    if (msg instanceof HttpResponse) {
      HttpResponse res = (HttpResponse) msg;
      if (res.status().codeClass() == HttpStatusClass.INFORMATIONAL) {
        ReferenceCountUtil.release(msg); // 100 Continue and the like
        return;
      }
      received = true;
      head = res;
      keepAlive &= HttpUtil.isKeepAlive(res);
      long declared = HttpUtil.getContentLength(res, -1L);
      if (declared > call.maxResponseBodySize()) {
        ReferenceCountUtil.release(msg);
        tooLarge(call);
        return;
      }
      if (content != null) {
        content.release(); // a second head for one call: nothing keeps what came with the first
      }
      content = new ReceivedContent(ctx.alloc(), false, declared, false);
    }
    if (msg instanceof HttpContent) {
      HttpContent chunk = (HttpContent) msg;
      ByteBuf data = chunk.content();
      if (content == null) {
        chunk.release();
      } else if (content.size() + data.readableBytes() > call.maxResponseBodySize()) {
        chunk.release();
        tooLarge(call);
        return;
      } else {
        content.append(chunk);
      }
      if (msg instanceof LastHttpContent && head != null) {
        complete(call);
      }
    }
  }

  private void complete(ClientCall call) {
    ClientResponse response =
        new ClientResponse(head.status().code(), head.headers(), content.take());
    content = null;
    head = null;
    current = null;
    if (!call
        .settle()) { // cancelled meanwhile: nobody takes the response, the connection is not reused
      response.content().release();
      channel.close();
      return;
    }
    peer.releaseH1(
        channel, keepAlive && !writing); // back in the pool before the caller hears of it
    peer.callSucceeded();
    call.deliver(response);
  }

  private void tooLarge(ClientCall call) {
    abort(
        YarpcException.of(
            Code.RESOURCE_EXHAUSTED,
            "response body from peer %s is larger than the limit of %d bytes",
            peer.identifier(),
            call.maxResponseBodySize()));
  }

  /** Fails the current call and closes the connection (it cannot be reused). */
  private void abort(YarpcException error) {
    ClientCall call = current;
    current = null;
    releaseContent();
    if (call != null) {
      call.fail(error);
    }
    channel.close();
  }

  private void releaseContent() {
    if (content != null) {
      content.release();
      content = null;
    }
    head = null;
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
    if (evt instanceof IdleStateEvent) {
      if (current == null) {
        ctx.close();
      }
      return;
    }
    ctx.fireUserEventTriggered(evt);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    if (current != null && !writing) {
      attemptEnded(cause);
    }
    ctx.close();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    releaseContent();
    if (current != null && !writing) {
      attemptEnded(null); // while writing, the write's outcome ends the attempt
    }
    ctx.fireChannelInactive();
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    releaseContent();
  }
}
