package io.yarpc.transport.http.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.yarpc.errors.ApplicationErrorMeta;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.WireText;
import io.yarpc.netty.internal.IoErrors;
import io.yarpc.transport.Body;
import io.yarpc.transport.Response;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns a handler's {@link Response} or {@link YarpcException} into the HTTP response yarpc-go would
 * write (docs/spec/wire-http.md §3.3). Response bodies are written straight from the {@link Body} into
 * one pooled direct buffer sized by {@link Body#length()}; the body is released here, once, whatever
 * happens. {@link #answerSuccess} and {@link #answerError} never throw: what cannot be built is answered
 * {@code internal} with a fixed message. Pure functions of their arguments; callable on any thread.
 */
final class InboundResponses {
  /** The message of the {@code internal} answer given when the real answer could not be built. */
  static final String BUILD_FAILED = "the server failed to build the response";

  private static final Logger log = LoggerFactory.getLogger(InboundResponses.class);
  private static final int UNKNOWN_LENGTH_GUESS = 256;

  private InboundResponses() {}

  /**
   * What the response needs from its request; {@code http2}: the answer goes out on an HTTP/2 stream, so
   * its fields are written straight into an HTTP/2 header block ({@link Http2HeadersView});
   * {@code headRequest}: the request was a {@code HEAD}, so the answer goes out without its content.
   */
  record Context(
      HttpVersion version,
      String service,
      String encoding,
      boolean bothResponseError,
      boolean http2,
      boolean headRequest) {
    /** The context of an HTTP/1.1 answer to a request that is not {@code HEAD}. */
    Context(HttpVersion version, String service, String encoding, boolean bothResponseError) {
      this(version, service, encoding, bothResponseError, false, false);
    }
  }

  /**
   * A successful (possibly application-error) response. Releases the response's body.
   *
   * @throws IOException when a lazy body fails to serialise; its body is released and nothing leaks (nor
   *     when anything else is thrown: the buffer written so far is released too)
   */
  static FullHttpResponse success(Context ctx, Response response, ByteBufAllocator alloc)
      throws IOException {
    ByteBuf content = write(response.body(), alloc);
    FullHttpResponse res = newResponse(ctx, HttpResponseStatus.OK, content);
    try {
      HttpHeaders h = res.headers();
      h.set(
          WireHeaders.STATUS,
          response.isApplicationError() ? WireHeaders.STATUS_ERROR : WireHeaders.STATUS_SUCCESS);
      h.set(WireHeaders.SERVICE, WireHeaders.sanitizeValue(ctx.service()));
      WireHeaders.writeApplicationHeaders(response.headers(), h);
      applicationErrorMeta(response, h);
      String contentType = WireHeaders.contentType(ctx.encoding());
      if (contentType != null) {
        h.set(HttpHeaderNames.CONTENT_TYPE, contentType);
      }
      h.setInt(HttpHeaderNames.CONTENT_LENGTH, content.readableBytes());
    } catch (RuntimeException | Error headerFailure) {
      res.release();
      throw headerFailure;
    }
    return res;
  }

  /**
   * An error response: status by code (or {@code statusOverride} when positive), {@code Rpc-Error-*}
   * headers, and either the both-response-error form or a {@code text/plain} message body. Releases the
   * body of a response carried by the error, and everything it allocated when it throws.
   */
  static FullHttpResponse error(
      Context ctx, YarpcException e, int statusOverride, ByteBufAllocator alloc) {
    Response carried = e.response();
    try {
      int status = statusOverride > 0 ? statusOverride : StatusCodes.toHttpStatus(e.code());
      ByteBuf content;
      boolean both = ctx.bothResponseError();
      byte[] details = e.details();
      String message = e.getMessage();
      if (both) {
        if (details != null) {
          content = alloc.directBuffer(details.length).writeBytes(details);
        } else if (carried != null && carried.body().length() != 0) {
          try {
            content = write(carried.body(), alloc);
          } catch (IOException | RuntimeException ignored) {
            content = Unpooled.EMPTY_BUFFER;
          }
        } else {
          content = Unpooled.EMPTY_BUFFER;
        }
      } else {
        byte[] text = (message + "\n").getBytes(StandardCharsets.UTF_8);
        content = alloc.directBuffer(text.length).writeBytes(text);
      }
      FullHttpResponse res = newResponse(ctx, HttpResponseStatus.valueOf(status), content);
      try {
        errorHeaders(ctx, e, res.headers(), carried, both, details, message);
        res.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, content.readableBytes());
      } catch (RuntimeException | Error headerFailure) {
        res.release();
        throw headerFailure;
      }
      return res;
    } finally {
      if (carried != null) {
        carried.body().release();
      }
    }
  }

  /**
   * The answer carrying a handler's response, as {@link #success} builds it, but never throwing: a body
   * that fails to serialise (an {@link Exception}) is answered {@code unknown} {@code failed to write the
   * response body: ...}; anything else that fails (an {@link Error}, or building that answer) is answered
   * {@code internal} {@value #BUILD_FAILED}. The response's body is released in every case, and nothing
   * allocated leaks. Null only when not even the {@code internal} answer could be built.
   */
  static FullHttpResponse answerSuccess(Context ctx, Response response, ByteBufAllocator alloc) {
    try {
      try {
        return success(ctx, response, alloc);
      } catch (Exception e) {
        YarpcException failure =
            e instanceof YarpcException
                ? (YarpcException) e
                : YarpcException.withCause(
                    Code.UNKNOWN,
                    String.format("failed to write the response body: %s", IoErrors.describe(e)),
                    e);
        return error(ctx, failure, 0, alloc);
      }
    } catch (Throwable t) {
      if (response != null) {
        quietly(() -> response.body().release());
      }
      return buildFailed(ctx, t, alloc);
    }
  }

  /**
   * The answer carrying {@code error} (as {@link YarpcException#from}), as {@link #error} builds it, but
   * never throwing: when that fails the answer is {@code internal} {@value #BUILD_FAILED}. The body of a
   * response the error carries is released in every case. Null only when not even that could be built.
   */
  static FullHttpResponse answerError(
      Context ctx, Throwable error, int statusOverride, ByteBufAllocator alloc) {
    try {
      return error(ctx, YarpcException.from(error), statusOverride, alloc);
    } catch (Throwable t) {
      quietly(() -> YarpcException.releaseResponse(error));
      return buildFailed(ctx, t, alloc);
    }
  }

  /** {@code internal} {@value #BUILD_FAILED}, for an answer that could not be built; null if not even that. */
  private static FullHttpResponse buildFailed(
      Context ctx, Throwable cause, ByteBufAllocator alloc) {
    log.error("failed to build the answer to an HTTP request; answering internal", cause);
    try {
      return error(ctx, YarpcException.of(Code.INTERNAL, BUILD_FAILED), 0, alloc);
    } catch (Throwable t) {
      t.addSuppressed(cause);
      log.error("failed to build even the internal answer to an HTTP request", t);
      return null;
    }
  }

  /** A response with {@code content}, whose headers are an HTTP/2 block for an HTTP/2 answer. */
  private static FullHttpResponse newResponse(
      Context ctx, HttpResponseStatus status, ByteBuf content) {
    if (ctx.http2()) {
      return new DefaultFullHttpResponse(
          ctx.version(),
          status,
          content,
          new Http2HeadersView(new DefaultHttp2Headers()),
          EmptyHttpHeaders.INSTANCE);
    }
    return new DefaultFullHttpResponse(ctx.version(), status, content);
  }

  /** Runs a release that must not keep an exchange from its answer: a failure is logged, not thrown. */
  private static void quietly(Runnable release) {
    try {
      release.run();
    } catch (Throwable t) {
      log.warn("releasing a response body failed", t);
    }
  }

  private static void errorHeaders(
      Context ctx,
      YarpcException e,
      HttpHeaders h,
      Response carried,
      boolean both,
      byte[] details,
      String message) {
    boolean appError = carried != null && carried.isApplicationError();
    h.set(WireHeaders.STATUS, appError ? WireHeaders.STATUS_ERROR : WireHeaders.STATUS_SUCCESS);
    h.set(WireHeaders.SERVICE, WireHeaders.sanitizeValue(ctx.service()));
    if (carried != null) {
      WireHeaders.writeApplicationHeaders(carried.headers(), h);
      applicationErrorMeta(carried, h);
    }
    h.set(WireHeaders.ERROR_CODE, e.code().wireName());
    if (e.name() != null) {
      h.set(WireHeaders.ERROR_NAME, WireHeaders.sanitizeValue(e.name()));
    }
    if (both) {
      h.set(WireHeaders.BOTH_RESPONSE_ERROR, WireHeaders.TRUE);
      h.set(WireHeaders.ERROR_MESSAGE, WireHeaders.sanitizeValue(message));
      if (details != null) {
        // the body carries the raw details; the header (base64, as gRPC sends -bin values) flags
        // them
        h.set(
            WireHeaders.ERROR_DETAILS,
            Base64.getEncoder().withoutPadding().encodeToString(details));
      }
    } else {
      h.set(HttpHeaderNames.CONTENT_TYPE, WireHeaders.TEXT_PLAIN);
    }
  }

  private static void applicationErrorMeta(Response response, HttpHeaders h) {
    ApplicationErrorMeta meta = response.applicationErrorMeta();
    if (meta == null || meta.equals(ApplicationErrorMeta.EMPTY)) {
      return;
    }
    if (meta.code() != null) {
      h.set(WireHeaders.APPLICATION_ERROR_CODE, Integer.toString(meta.code().value()));
    } else if (response.isApplicationError()) {
      h.set(
          WireHeaders.APPLICATION_ERROR_CODE,
          "2"); // unknown: relays classify failures by this header
    }
    if (meta.name() != null && !meta.name().isEmpty()) {
      h.set(WireHeaders.APPLICATION_ERROR_NAME, WireHeaders.sanitizeValue(meta.name()));
    }
    if (meta.details() != null && !meta.details().isEmpty()) {
      h.set(
          WireHeaders.APPLICATION_ERROR_DETAILS,
          WireHeaders.sanitizeValue(WireText.details(meta.details())));
    }
  }

  /** {@code body} written into a new pooled direct buffer; the body is released in any case. */
  static ByteBuf write(Body body, ByteBufAllocator alloc) throws IOException {
    try {
      long length = body.length();
      if (length == 0) {
        return Unpooled.EMPTY_BUFFER;
      }
      if (length > Integer.MAX_VALUE - 8) {
        throw new IOException("response body of " + length + " bytes is too large");
      }
      ByteBuf buf = alloc.directBuffer(length < 0 ? UNKNOWN_LENGTH_GUESS : (int) length);
      boolean ok = false;
      try {
        if (body.hasByteAccess()) {
          for (ByteBuffer view : body.byteBuffers()) {
            buf.writeBytes(
                view); // straight from the views, heap or direct, with no array in between
          }
        } else {
          body.writeTo(new ByteBufOutputStream(buf));
        }
        ok = true;
        return buf;
      } finally {
        if (!ok) {
          buf.release();
        }
      }
    } finally {
      body.release();
    }
  }
}
