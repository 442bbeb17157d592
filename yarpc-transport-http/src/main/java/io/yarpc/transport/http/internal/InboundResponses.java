package io.yarpc.transport.http.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.yarpc.errors.ApplicationErrorMeta;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.WireText;
import io.yarpc.transport.Body;
import io.yarpc.transport.Response;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * Turns a handler's {@link Response} or {@link YarpcException} into the HTTP response yarpc-go would
 * write (docs/spec/wire-http.md §3.3). Response bodies are written straight from the {@link Body} into
 * one pooled direct buffer sized by {@link Body#length()}; the body is released here, once, whatever
 * happens.
 */
final class InboundResponses {
  private static final int UNKNOWN_LENGTH_GUESS = 256;

  private InboundResponses() {}

  /** What the response needs from its request. */
  record Context(HttpVersion version, String service, String encoding, boolean bothResponseError) {}

  /**
   * A successful (possibly application-error) response. Releases the response's body.
   *
   * @throws IOException when a lazy body fails to serialise; its body is released and nothing leaks
   */
  static FullHttpResponse success(Context ctx, Response response, ByteBufAllocator alloc) throws IOException {
    ByteBuf content = write(response.body(), alloc);
    FullHttpResponse res = new DefaultFullHttpResponse(ctx.version(), HttpResponseStatus.OK, content);
    HttpHeaders h = res.headers();
    h.set(WireHeaders.STATUS, response.isApplicationError() ? WireHeaders.STATUS_ERROR : WireHeaders.STATUS_SUCCESS);
    h.set(WireHeaders.SERVICE, WireHeaders.sanitizeValue(ctx.service()));
    WireHeaders.writeApplicationHeaders(response.headers(), h);
    applicationErrorMeta(response, h);
    String contentType = WireHeaders.contentType(ctx.encoding());
    if (contentType != null) {
      h.set(HttpHeaderNames.CONTENT_TYPE, contentType);
    }
    h.setInt(HttpHeaderNames.CONTENT_LENGTH, content.readableBytes());
    return res;
  }

  /**
   * An error response: status by code (or {@code statusOverride} when positive), {@code Rpc-Error-*}
   * headers, and either the both-response-error form or a {@code text/plain} message body. Releases the
   * body of a response carried by the error.
   */
  static FullHttpResponse error(Context ctx, YarpcException e, int statusOverride, ByteBufAllocator alloc) {
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
      FullHttpResponse res =
          new DefaultFullHttpResponse(ctx.version(), HttpResponseStatus.valueOf(status), content);
      try {
        errorHeaders(ctx, e, res.headers(), carried, both, details, message);
        res.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, content.readableBytes());
      } catch (RuntimeException headerFailure) {
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

  private static void errorHeaders(Context ctx, YarpcException e, HttpHeaders h, Response carried,
      boolean both, byte[] details, String message) {
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
        // the body carries the raw details; the header (base64, as gRPC sends -bin values) flags them
        h.set(WireHeaders.ERROR_DETAILS, Base64.getEncoder().withoutPadding().encodeToString(details));
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
      h.set(WireHeaders.APPLICATION_ERROR_CODE, "2"); // unknown: relays classify failures by this header
    }
    if (meta.name() != null && !meta.name().isEmpty()) {
      h.set(WireHeaders.APPLICATION_ERROR_NAME, WireHeaders.sanitizeValue(meta.name()));
    }
    if (meta.details() != null && !meta.details().isEmpty()) {
      h.set(WireHeaders.APPLICATION_ERROR_DETAILS,
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
            buf.writeBytes(view); // straight from the views, heap or direct, with no array in between
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
