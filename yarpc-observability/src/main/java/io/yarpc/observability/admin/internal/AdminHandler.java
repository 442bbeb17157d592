package io.yarpc.observability.admin.internal;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.handler.timeout.IdleStateEvent;
import io.yarpc.netty.internal.Http1Heads;
import io.yarpc.observability.admin.internal.AdminRoutes.Answer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connection's requests: checks each as its parts arrive (a request line or headers too large, a
 * body too large, a request that cannot be parsed: an error answer, then the connection closes), and
 * answers a complete one with {@link AdminRoutes}. Request parts are released as they are read (the
 * endpoints use no body); answers are heap buffers the encoder releases. HTTP/1.1 keep-alive and
 * pipelining work: answers go out in request order because each is written when its request completes.
 */
final class AdminHandler extends SimpleChannelInboundHandler<HttpObject> {
  private static final Logger log = LoggerFactory.getLogger("io.yarpc.observability.admin");

  private final AdminRoutes routes;
  private HttpRequest pending; // the request whose body is being read
  private long bodyBytes;
  private boolean closing; // an answer that closes the connection was written: ignore the rest

  AdminHandler(AdminRoutes routes) {
    super(true); // releases every HttpObject after channelRead0
    this.routes = routes;
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, HttpObject msg) {
    if (closing) {
      return;
    }
    if (msg instanceof HttpRequest) {
      HttpRequest request = (HttpRequest) msg;
      DecoderResult result = request.decoderResult();
      if (result.isFailure()) {
        refuse(ctx, request, decodeFailure(result.cause()));
        return;
      }
      Http1Heads.Problem problem =
          Http1Heads.check(request); // Host and version, as the HTTP inbound
      if (problem != null) {
        refuse(
            ctx,
            request,
            Answer.text(HttpResponseStatus.valueOf(problem.status()), problem.message() + "\n"));
        return;
      }
      long length = HttpUtil.getContentLength(request, -1L);
      if (length > AdminChannels.MAX_BODY_BYTES) {
        refuse(ctx, request, tooLarge());
        return;
      }
      pending = request;
      bodyBytes = 0;
    }
    if (msg instanceof HttpContent && pending != null) {
      HttpContent content = (HttpContent) msg;
      if (content.decoderResult().isFailure()) {
        refuse(ctx, pending, decodeFailure(content.decoderResult().cause()));
        return;
      }
      bodyBytes += content.content().readableBytes();
      if (bodyBytes > AdminChannels.MAX_BODY_BYTES) {
        refuse(ctx, pending, tooLarge());
        return;
      }
      if (msg instanceof LastHttpContent) {
        HttpRequest request = pending;
        pending = null;
        answer(ctx, request);
      }
    }
  }

  private void answer(ChannelHandlerContext ctx, HttpRequest request) {
    String path = new QueryStringDecoder(Http1Heads.originForm(request.uri())).path();
    HttpMethod method = request.method();
    boolean keepAlive = HttpUtil.isKeepAlive(request);
    Answer answer;
    boolean allowHeader = false;
    if (!AdminRoutes.known(path)) {
      answer = AdminRoutes.notFound();
    } else if (!method.equals(HttpMethod.GET) && !method.equals(HttpMethod.HEAD)) {
      answer =
          Answer.text(
              HttpResponseStatus.METHOD_NOT_ALLOWED,
              "method " + method.name() + " not allowed; " + path + " answers GET and HEAD\n");
      allowHeader = true;
    } else {
      try {
        answer = routes.get(path, request.headers().get(HttpHeaderNames.ACCEPT));
      } catch (RuntimeException e) {
        log.warn("admin server failed to answer GET {}", path, e);
        answer =
            Answer.text(
                HttpResponseStatus.INTERNAL_SERVER_ERROR,
                "internal error while answering " + path + " (the server logged it)\n");
        keepAlive = false;
      }
    }
    write(ctx, request, answer, keepAlive, allowHeader);
  }

  /** Answers an error and closes the connection (the rest of the request is not read). */
  private void refuse(ChannelHandlerContext ctx, HttpRequest request, Answer answer) {
    pending = null;
    write(ctx, request, answer, false, false);
  }

  private void write(
      ChannelHandlerContext ctx,
      HttpRequest request,
      Answer answer,
      boolean keepAlive,
      boolean allowHeader) {
    boolean head = request != null && HttpMethod.HEAD.equals(request.method());
    FullHttpResponse response =
        new DefaultFullHttpResponse(
            HttpVersion.HTTP_1_1,
            answer.status(),
            head ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(answer.body()));
    response
        .headers()
        .set(HttpHeaderNames.CONTENT_TYPE, answer.contentType())
        .setInt(HttpHeaderNames.CONTENT_LENGTH, answer.body().length)
        .set(HttpHeaderNames.CACHE_CONTROL, "no-store")
        .set("X-Content-Type-Options", "nosniff");
    if (answer.contentType().startsWith("text/html")) {
      // the page has an inline style sheet and nothing else: forbid anything else
      response
          .headers()
          .set(
              "Content-Security-Policy",
              "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; "
                  + "frame-ancestors 'none'");
    }
    if (allowHeader) {
      response.headers().set(HttpHeaderNames.ALLOW, "GET, HEAD");
    }
    if (keepAlive) {
      if (request.protocolVersion().equals(HttpVersion.HTTP_1_0)) {
        response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
      }
      ctx.writeAndFlush(response, ctx.voidPromise());
    } else {
      closing = true;
      response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
      ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
    }
  }

  private static Answer decodeFailure(Throwable cause) {
    if (cause instanceof TooLongHttpLineException) {
      return Answer.text(
          HttpResponseStatus.REQUEST_URI_TOO_LONG,
          "request line longer than " + AdminChannels.MAX_REQUEST_LINE + " bytes\n");
    }
    if (cause instanceof TooLongHttpHeaderException) {
      return Answer.text(
          HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
          "request headers larger than " + AdminChannels.MAX_HEADER_BYTES + " bytes\n");
    }
    return Answer.text(HttpResponseStatus.BAD_REQUEST, "malformed HTTP request\n");
  }

  private static Answer tooLarge() {
    return Answer.text(
        HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
        "request body larger than " + AdminChannels.MAX_BODY_BYTES + " bytes\n");
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
    if (evt instanceof IdleStateEvent) {
      ctx.close();
      return;
    }
    super.userEventTriggered(ctx, evt);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    // a reset connection, a write that failed: nothing to tell the peer
    log.debug("admin server connection {} failed", ctx.channel().remoteAddress(), cause);
    ctx.close();
  }
}
