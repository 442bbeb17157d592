package io.yarpc.transport.http.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpVersion;
import io.yarpc.errors.ApplicationErrorMeta;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.Checks;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * The client half of the wire protocol (docs/spec/wire-http.md §3.1 and §3.3): builds the HTTP request
 * for a YARPC request, and reads the YARPC response or error out of an HTTP response.
 */
public final class OutboundCodec {
  private OutboundCodec() {}

  /**
   * The request's skeleton: {@code POST path} with the body written into one pooled buffer, and no
   * headers yet ({@link #writeHeaders} adds them once the peer is known). The body is released here in any
   * case.
   */
  public static FullHttpRequest request(Body body, String path, ByteBufAllocator alloc)
      throws IOException {
    ByteBuf content = InboundResponses.write(body, alloc);
    return new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, path, content);
  }

  /**
   * Adds the headers yarpc-go sends, in Go's canonical casing: {@code Host}, the outbound's own headers,
   * the {@code Rpc-*} metadata, {@code Context-TTL-MS} (the deadline's remaining milliseconds, truncated),
   * the application headers, the propagation headers (plain, as yarpc-go's tracer writes them) and {@code
   * Content-Length}.
   */
  public static void writeHeaders(
      FullHttpRequest req,
      RequestMeta meta,
      String authority,
      List<Map.Entry<String, String>> extraHeaders) {
    HttpHeaders h = req.headers();
    h.set(HOST, authority);
    for (Map.Entry<String, String> e : extraHeaders) {
      h.add(e.getKey(), e.getValue());
    }
    h.set(WireHeaders.CALLER, WireHeaders.sanitizeValue(meta.caller()));
    h.set(WireHeaders.SERVICE, WireHeaders.sanitizeValue(meta.service()));
    h.set(WireHeaders.PROCEDURE, WireHeaders.sanitizeValue(meta.procedure()));
    Deadline deadline = meta.deadline();
    if (deadline != null) {
      long ms = Math.max(0, deadline.remainingNanos() / 1_000_000); // truncated, as yarpc-go does
      h.set(WireHeaders.TTL_MS, Long.toString(ms));
    }
    setIfNotEmpty(h, WireHeaders.SHARD_KEY, meta.shardKey());
    setIfNotEmpty(h, WireHeaders.ROUTING_KEY, meta.routingKey());
    setIfNotEmpty(h, WireHeaders.ROUTING_DELEGATE, meta.routingDelegate());
    setIfNotEmpty(h, WireHeaders.CALLER_PROCEDURE, meta.callerProcedure());
    setIfNotEmpty(h, WireHeaders.ENCODING, meta.encoding());
    h.set(WireHeaders.ACCEPTS_BOTH_RESPONSE_ERROR, WireHeaders.TRUE);
    WireHeaders.writeApplicationHeaders(meta.headers(), h);
    WireHeaders.writePropagationHeaders(meta.propagationHeaders(), h);
    h.setInt(CONTENT_LENGTH, req.content().readableBytes());
  }

  private static final String HOST = "Host";
  private static final String CONTENT_LENGTH = "Content-Length";

  private static void setIfNotEmpty(HttpHeaders h, String name, String value) {
    if (!value.isEmpty()) {
      h.set(name, WireHeaders.sanitizeValue(value));
    }
  }

  /**
   * The YARPC response in {@code r}, taking ownership of its content: the response body is a byte-access
   * view of the received buffers, released when the caller releases the body.
   *
   * @throws YarpcException for an error response (possibly carrying a response with a body, in the
   *     both-response-error form), or {@code internal} when the response comes from another service
   */
  public static Response response(RequestMeta meta, ClientResponse r) {
    HttpHeaders h = r.headers();
    ByteBuf content = r.content();
    String service = WireHeaders.fromWire(h.get(WireHeaders.SERVICE));
    try {
      Checks.responseService(meta, service);
    } catch (YarpcException e) {
      content.release();
      throw e;
    }
    Response.Builder rb = Response.builder().headers(WireHeaders.applicationHeaders(h));
    if (WireHeaders.STATUS_ERROR.equals(h.get(WireHeaders.STATUS))) {
      rb.applicationError(applicationErrorMeta(h));
    }
    int status = r.status();
    boolean both = WireHeaders.TRUE.equals(h.get(WireHeaders.BOTH_RESPONSE_ERROR));
    if (both) {
      if (status < 300) {
        return rb.body(ReceivedContent.asBody(content)).build();
      }
      byte[] details = null;
      String detailsHeader = h.get(WireHeaders.ERROR_DETAILS);
      Body body;
      if (detailsHeader != null && !detailsHeader.isEmpty()) {
        details =
            copy(content); // the body holds the raw details (the header may not have kept them)
        content.release();
        body = Body.empty();
      } else {
        body = ReceivedContent.asBody(content);
      }
      YarpcException e = error(h, status, WireHeaders.get(h, WireHeaders.ERROR_MESSAGE));
      if (details != null) {
        e = e.withDetails(details);
      }
      return throwWith(e, rb.body(body).build());
    }
    if (status >= 200 && status < 300) {
      return rb.body(ReceivedContent.asBody(content)).build();
    }
    String text;
    try {
      text = content.toString(StandardCharsets.UTF_8);
    } finally {
      content.release();
    }
    if (text.endsWith("\n")) {
      text = text.substring(0, text.length() - 1);
    }
    throw error(h, status, text);
  }

  private static Response throwWith(YarpcException e, Response response) {
    throw e.withResponse(response);
  }

  private static YarpcException error(HttpHeaders h, int status, String message) {
    Code code = Code.fromWireName(h.get(WireHeaders.ERROR_CODE));
    if (code == null || code == Code.OK) {
      code = StatusCodes.fromHttpStatus(status);
      if (code == Code.OK) {
        code = Code.UNKNOWN;
      }
    }
    YarpcException e = YarpcException.of(code, message);
    String name = WireHeaders.fromWire(h.get(WireHeaders.ERROR_NAME));
    return name == null || name.isEmpty() ? e : e.withName(name);
  }

  private static ApplicationErrorMeta applicationErrorMeta(HttpHeaders h) {
    Code code = null;
    String codeText = h.get(WireHeaders.APPLICATION_ERROR_CODE);
    if (codeText != null && !codeText.isEmpty()) {
      try {
        code = Code.fromValue(Integer.parseInt(codeText.trim()));
      } catch (NumberFormatException ignored) {
        // no code
      }
    }
    String name = emptyToNull(WireHeaders.fromWire(h.get(WireHeaders.APPLICATION_ERROR_NAME)));
    String details =
        emptyToNull(WireHeaders.fromWire(h.get(WireHeaders.APPLICATION_ERROR_DETAILS)));
    if (code == null && name == null && details == null) {
      return ApplicationErrorMeta.EMPTY;
    }
    return new ApplicationErrorMeta(code, name, details);
  }

  private static String emptyToNull(String s) {
    return s == null || s.isEmpty() ? null : s;
  }

  private static byte[] copy(ByteBuf buf) {
    byte[] out = new byte[buf.readableBytes()];
    buf.getBytes(buf.readerIndex(), out);
    return out;
  }
}
