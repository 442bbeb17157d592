package io.yarpc.transport.http.internal;

import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.yarpc.netty.internal.Http1Heads;
import java.nio.charset.StandardCharsets;

/**
 * The inbound's plain-HTTP health check: which requests ask for it and what they get. Pure functions;
 * callable on any thread. The answers hold unpooled wrapped constants: releasing them frees nothing.
 */
final class HealthCheck {
  private static final byte[] SERVING = "SERVING\n".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] NOT_SERVING = "NOT_SERVING\n".getBytes(StandardCharsets.US_ASCII);

  private HealthCheck() {}

  /**
   * Whether {@code req} is a {@code GET} or {@code HEAD} of exactly {@code path} (query ignored; the target
   * in origin or absolute form); never when {@code path} is null (the check is off).
   */
  static boolean matches(HttpRequest req, String path) {
    if (path == null
        || !(HttpMethod.GET.equals(req.method()) || HttpMethod.HEAD.equals(req.method()))) {
      return false;
    }
    String uri = Http1Heads.originForm(req.uri());
    int query = uri.indexOf('?');
    return query < 0 ? uri.equals(path) : query == path.length() && uri.startsWith(path);
  }

  /**
   * 200 {@code SERVING} or 503 {@code NOT_SERVING} as {@code serving} says, no {@code Rpc-*} headers, no
   * caching; no body for {@code HEAD} (but the {@code content-length} a {@code GET} would get).
   */
  static FullHttpResponse response(HttpVersion version, HttpMethod method, boolean serving) {
    boolean head = HttpMethod.HEAD.equals(method);
    byte[] text = serving ? SERVING : NOT_SERVING;
    FullHttpResponse res =
        new DefaultFullHttpResponse(
            version,
            serving ? HttpResponseStatus.OK : HttpResponseStatus.SERVICE_UNAVAILABLE,
            head ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(text));
    res.headers()
        .set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8")
        .set(HttpHeaderNames.CONTENT_LENGTH, text.length)
        .set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_STORE);
    return res;
  }
}
