package io.yarpc.transport.http.internal;

import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.GoStrings;
import io.yarpc.netty.internal.Http1Heads;
import io.yarpc.transport.ConnectionInfo;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.RequestMeta;
import java.time.Duration;

/**
 * Reads a received request head the way docs/spec/wire-http.md §3.2 says: what its answer needs, the
 * method check, and the YARPC metadata ({@link RequestMeta}) with the TTL error that is reported after
 * routing.
 *
 * <p>Pure functions of the head: no channel, no state, no buffers; callable on any thread. The head is only
 * read (its headers are not removed), and its body is not touched.
 */
final class RequestDecoder {
  static final String TRANSPORT_HTTP = "http";
  static final String TRANSPORT_HTTP2 = "http2";

  private RequestDecoder() {}

  /** The metadata of a request, and the error of an unusable TTL (reported after routing), or null. */
  record Decoded(RequestMeta meta, YarpcException ttlError) {}

  /**
   * What an answer to {@code req} needs: the HTTP version to answer with (HTTP/1.1 on HTTP/2, where the
   * stream codec ignores it), the service to echo, the encoding (for the content type) and whether the
   * client accepts both a response and an error. {@code req} is null for a request rejected before its
   * head was decoded: then HTTP/1.1, no service, no encoding, no both-response-error.
   */
  static InboundResponses.Context responseContext(HttpRequest req, boolean http2) {
    HttpHeaders h = req == null ? null : req.headers();
    String service = h == null ? "" : WireHeaders.get(h, WireHeaders.SERVICE);
    String encoding = h == null ? "" : WireHeaders.get(h, WireHeaders.ENCODING);
    boolean both =
        h != null && WireHeaders.TRUE.equals(h.get(WireHeaders.ACCEPTS_BOTH_RESPONSE_ERROR));
    boolean head = req != null && HttpMethod.HEAD.equals(req.method());
    return new InboundResponses.Context(
        answerVersion(req, http2), service, encoding, both, http2, head);
  }

  /** The version an answer to {@code req} carries ({@link Http1Heads#answerVersion}; HTTP/1.1 on h2c). */
  static HttpVersion answerVersion(HttpRequest req, boolean http2) {
    return http2 ? HttpVersion.HTTP_1_1 : Http1Heads.answerVersion(req);
  }

  /**
   * The error an HTTP/1.x head that {@link Http1Heads#check} refuses is answered with, under the
   * problem's status: {@code unimplemented} for a version other than 1.x (505), else {@code
   * invalid-argument} (400: a missing, repeated or invalid {@code Host}).
   */
  static YarpcException headError(Http1Heads.Problem p) {
    Code code = p.status() == 505 ? Code.UNIMPLEMENTED : Code.INVALID_ARGUMENT;
    return YarpcException.of(code, "%s", p.message());
  }

  /** Whether the client asked to keep the connection (true when there is no head to ask). */
  static boolean keepAlive(HttpRequest req) {
    return req == null || HttpUtil.isKeepAlive(req);
  }

  /** docs/spec/wire-http.md §3.2 step 2: {@code not-found} for any method but {@code POST}, else null. */
  static YarpcException methodError(HttpRequest req) {
    if (HttpMethod.POST.equals(req.method())) {
      return null;
    }
    return YarpcException.of(
        Code.NOT_FOUND, "request method was %s but only POST is allowed", req.method().name());
  }

  /**
   * docs/spec/wire-http.md §3.2 steps 3, 4 and 6: the metadata from the {@code Rpc-*} headers, application
   * and propagation headers (the unprefixed tracing keys are propagation headers, docs/spec/model.md
   * §8.3), and the deadline from {@code Context-TTL-MS} counted from now. A TTL that is not a non-negative integer leaves
   * the deadline unset and yields {@code invalid TTL "..." for service "S" and procedure "P"}. {@code
   * connection} (the connection the request arrived on, or null) is set on the metadata as it is.
   */
  static Decoded decode(HttpRequest req, boolean http2, ConnectionInfo connection) {
    HttpHeaders h = req.headers();
    String service = WireHeaders.get(h, WireHeaders.SERVICE);
    String procedure = WireHeaders.get(h, WireHeaders.PROCEDURE);
    WireHeaders.RequestHeaders headers = WireHeaders.requestHeaders(h);
    RequestMeta.Builder mb =
        RequestMeta.builder()
            .caller(WireHeaders.get(h, WireHeaders.CALLER))
            .service(service)
            .procedure(procedure)
            .encoding(WireHeaders.get(h, WireHeaders.ENCODING))
            .transport(http2 ? TRANSPORT_HTTP2 : TRANSPORT_HTTP)
            .shardKey(WireHeaders.get(h, WireHeaders.SHARD_KEY))
            .routingKey(WireHeaders.get(h, WireHeaders.ROUTING_KEY))
            .routingDelegate(WireHeaders.get(h, WireHeaders.ROUTING_DELEGATE))
            .callerProcedure(WireHeaders.get(h, WireHeaders.CALLER_PROCEDURE))
            .headers(headers.application())
            .propagationHeaders(headers.propagation())
            .connection(connection);
    String ttl = WireHeaders.get(h, WireHeaders.TTL_MS);
    YarpcException ttlError = null;
    if (!ttl.isEmpty()) {
      long ms = -1;
      try {
        ms = Long.parseLong(ttl);
      } catch (NumberFormatException ignored) {
        // reported below
      }
      if (ms < 0) {
        String shown = isInteger(ttl) ? Long.toString(ms) : ttl;
        ttlError =
            YarpcException.of(
                Code.INVALID_ARGUMENT,
                "invalid TTL %s for service %s and procedure %s",
                GoStrings.quote(shown),
                GoStrings.quote(service),
                GoStrings.quote(procedure));
      } else {
        mb.deadline(Deadline.after(Duration.ofMillis(ms)));
      }
    }
    return new Decoded(mb.build(), ttlError);
  }

  private static boolean isInteger(String s) {
    try {
      Long.parseLong(s);
      return true;
    } catch (NumberFormatException e) {
      return false;
    }
  }
}
