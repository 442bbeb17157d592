package io.yarpc.transport.http.internal;

import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpRequest;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.Futures;
import io.yarpc.netty.internal.Connections;
import io.yarpc.transport.DeadlinePolicy;
import io.yarpc.transport.HandlerSpec;
import io.yarpc.transport.InboundCalls;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.Router;
import io.yarpc.transport.RpcType;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves one received exchange as docs/spec/wire-http.md §3.2 orders it: the health check, the method
 * check, decoding ({@link RequestDecoder}), routing with the TTL, deadline and call-type checks
 * ({@link #route}), then the unary or oneway handler; and turns the outcome into the answer
 * ({@link InboundResponses}), which goes to the {@link Answers} (the channel's handler) to be written. A
 * oneway call is answered as soon as it is accepted; a unary one when its handler's future completes. Over
 * HTTP/2, a unary call the dispatcher refused before its handler ({@linkplain YarpcException#unprocessed()
 * unprocessed}: stopping, at a limit) is answered by resetting its stream with {@code REFUSED_STREAM}, which
 * tells the client it may send it again; HTTP/1.1 has no such signal and answers with the error.
 *
 * <p><b>Every exchange is answered.</b> The answers come from {@link InboundResponses#answerSuccess} and
 * {@link InboundResponses#answerError}, which never throw: an answer that cannot be built (a response body
 * that throws an {@link Error}, a carried error response that cannot be written...) becomes {@code internal}
 * with a fixed message, written like any other; if not even that can be built, the channel is closed. No
 * client waits for its deadline.
 *
 * <p><b>Threads.</b> {@link #serve} runs on the event loop and writes the answers it decides at once;
 * {@link #completed} runs on whatever thread completes the handler's future, builds the answer there
 * (serialising the response body into a pooled buffer) and hands it to the event loop.
 *
 * <p><b>Ownership.</b> The exchange keeps its body buffer until the call is routed; an exchange answered
 * before that has it released here. Then the buffer becomes the request {@link io.yarpc.transport.Body},
 * which belongs to the invocation: the dispatcher releases it when the handler's result completes (here it
 * is released only when the handler throws instead of returning a future). A response body the handler
 * returns, or that an error carries, is released once its answer is built. Each built answer is handed over
 * exactly once: to {@link Answers#write}, or released when the event loop is gone.
 */
final class CallServer {
  /** HTTP carries unary and oneway calls; streams are not part of it. */
  private static final Set<RpcType> HANDLED = EnumSet.of(RpcType.UNARY, RpcType.ONEWAY);

  private static final Logger log = LoggerFactory.getLogger(CallServer.class);

  /** Where answers go: the channel handler, which writes them in turn. Called on the event loop. */
  interface Answers {
    /** Writes {@code res}, which it takes over, as {@code ex}'s answer, then finishes {@code ex}. */
    void write(Exchange ex, FullHttpResponse res);

    /** Ends {@code ex} with nothing written (its client went away). */
    void finish(Exchange ex);

    /** Ends {@code ex} with nothing written and closes the channel: no answer could be built. */
    void abort(Exchange ex);

    /**
     * HTTP/2: ends {@code ex} by resetting its stream with {@code REFUSED_STREAM}, the protocol's word for
     * "not processed, safe to send again" (RFC 9113, section 8.7).
     */
    void refuse(Exchange ex);
  }

  private final InboundState state;
  private final String healthPath;
  private final DeadlinePolicy deadlinePolicy;
  private final ByteBufAllocator writeAllocator;
  private final boolean http2;
  private ChannelHandlerContext ctx;

  CallServer(
      InboundState state,
      String healthPath,
      DeadlinePolicy deadlinePolicy,
      ByteBufAllocator writeAllocator,
      boolean http2) {
    this.state = state;
    this.healthPath = healthPath;
    this.deadlinePolicy = deadlinePolicy;
    this.writeAllocator = writeAllocator;
    this.http2 = http2;
  }

  /** Binds the server to its channel (from the handler's {@code handlerAdded}). */
  void attach(ChannelHandlerContext ctx) {
    this.ctx = ctx;
  }

  /**
   * Serves {@code ex}, whose answer goes to {@code answers} (one server serves a whole connection: every
   * h2c stream has its own answers): answers a request rejected while it was received, or serves it.
   * Event loop.
   */
  void serve(Exchange ex, Answers answers) {
    ex.answers(answers);
    if (ex.rejection() != null) {
      fail(ex, ex.rejection(), ex.rejectionStatus()); // 413, 431, 400, 408
      return;
    }
    try {
      serveInOrder(ex);
    } catch (RuntimeException e) {
      log.error("unexpected failure serving an HTTP request", e);
      fail(
          ex,
          // the exception's text stays in the log above, not on the wire
          YarpcException.withCause(
              Code.INTERNAL, "internal error serving the request (the server logged it)", e),
          0);
    }
  }

  /** docs/spec/wire-http.md §3.2: health check, method, metadata, then {@link #route}, then the handler by type. */
  private void serveInOrder(Exchange ex) {
    HttpRequest req = ex.takeHead();
    if (HealthCheck.matches(req, healthPath)) {
      ex.releaseBody();
      ex.answers()
          .write(ex, HealthCheck.response(ex.context().version(), req.method(), state.isServing()));
      return;
    }
    YarpcException methodError = RequestDecoder.methodError(req);
    if (methodError != null) {
      fail(ex, methodError, 0);
      return;
    }
    RequestDecoder.Decoded decoded =
        RequestDecoder.decode(req, http2, Connections.info(ctx.channel()));
    InboundCalls.Routed routed;
    try {
      routed = route(state.router(), decoded.meta(), decoded.ttlError(), deadlinePolicy);
    } catch (YarpcException e) {
      fail(ex, e, 0);
      return;
    }
    HandlerSpec spec = routed.spec();
    Request request = Request.of(routed.meta(), ReceivedContent.asBody(ex.takeBody()));
    if (spec.type() == RpcType.UNARY) {
      serveUnary(ex, spec, request);
    } else {
      serveOneway(ex, spec, request);
    }
  }

  /**
   * Core's inbound path for {@code meta} ({@link InboundCalls}): routing (docs/spec/wire-http.md §3.2 step 8), then the
   * TTL error found while decoding (step 9, reported after routing), then the call type this transport
   * serves (unary and oneway, step 10), and the inbound's deadline policy. A unary or oneway call still
   * without a deadline is refused by the dispatcher's handler ({@code missing TTL}).
   *
   * @throws YarpcException the error to answer with (a router's failure as {@link YarpcException#from})
   */
  static InboundCalls.Routed route(
      Router router, RequestMeta meta, YarpcException ttlError, DeadlinePolicy policy) {
    if (router == null) {
      throw YarpcException.of(Code.UNAVAILABLE, "inbound has no router");
    }
    try {
      return InboundCalls.route(router, meta, "http", HANDLED, policy, ttlError);
    } catch (RuntimeException e) {
      throw YarpcException.from(e);
    }
  }

  private void serveUnary(Exchange ex, HandlerSpec spec, Request request) {
    CompletableFuture<Response> future =
        InboundCalls.handle(spec.unary(), request, request.body()::release);
    ex.future(future);
    future.whenComplete((response, error) -> completed(ex, response, error));
  }

  private void serveOneway(Exchange ex, HandlerSpec spec, Request request) {
    // acknowledged at once below, so a call the dispatcher would refuse for its missing TTL is
    // answered with that error first, as yarpc-go answers it
    YarpcException missing = InboundCalls.missingDeadline(request.meta(), RpcType.ONEWAY);
    if (missing != null) {
      request.body().release();
      fail(ex, missing, 0);
      return;
    }
    CompletableFuture<Void> future =
        InboundCalls.handle(spec.oneway(), request, request.body()::release);
    YarpcException refused = InboundCalls.onewayRefusal(future);
    if (refused != null) {
      fail(ex, refused, 0);
      return;
    }
    future.whenComplete(
        (v, e) -> {
          if (e != null) {
            log.debug("oneway handler for {} failed: {}", request.meta(), e.toString());
          }
        });
    write(
        ex,
        InboundResponses.answerSuccess(ex.context(), Response.builder().build(), writeAllocator));
  }

  /** Called on whatever thread completed the handler: builds the answer there, then writes on the event loop. */
  void completed(Exchange ex, Response response, Throwable error) {
    if (error != null
        && Futures.unwrap(error) instanceof CancellationException
        && !ctx.channel().isActive()) {
      // the client went away and we cancelled the call; nothing is written (a handler that
      // cancelled its own future on a live connection is answered below with cancelled, so answers
      // stay in order)
      onEventLoop(() -> ex.answers().finish(ex), ex);
      return;
    }
    if (http2 && error != null && YarpcException.from(error).unprocessed()) {
      // the dispatcher refused the call before its handler (stopping, at a limit)
      YarpcException.releaseResponse(error);
      onEventLoop(() -> ex.answers().refuse(ex), ex);
      return;
    }
    FullHttpResponse res =
        error == null
            ? InboundResponses.answerSuccess(ex.context(), response, writeAllocator)
            : InboundResponses.answerError(ex.context(), error, 0, writeAllocator);
    if (res == null) {
      onEventLoop(() -> ex.answers().abort(ex), ex);
      return;
    }
    try {
      ctx.executor().execute(() -> ex.answers().write(ex, res));
    } catch (RejectedExecutionException e) {
      res.release();
      ex.answers().finish(ex);
    }
  }

  /** Runs {@code task} on the event loop; when the loop is gone, finishes {@code ex} here instead. */
  private void onEventLoop(Runnable task, Exchange ex) {
    try {
      ctx.executor().execute(task);
    } catch (RejectedExecutionException e) {
      ex.answers().finish(ex);
    }
  }

  /** Answers {@code ex} with {@code error} (HTTP {@code status}, or by code when 0), on the event loop. */
  private void fail(Exchange ex, YarpcException error, int status) {
    ex.releaseBody();
    write(ex, InboundResponses.answerError(ex.context(), error, status, writeAllocator));
  }

  private void write(Exchange ex, FullHttpResponse res) {
    if (res == null) {
      ex.answers().abort(ex);
    } else {
      ex.answers().write(ex, res);
    }
  }
}
