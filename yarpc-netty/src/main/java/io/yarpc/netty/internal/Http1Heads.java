package io.yarpc.netty.internal;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import java.util.List;

/**
 * The rules an HTTP/1.x request head must meet before a server answers it, for every HTTP/1.x server of
 * yarpc-java (the HTTP inbound and the admin listener), as Go's {@code net/http} applies them:
 *
 * <ul>
 *   <li>a major version other than 1: 505;
 *   <li>more than one {@code Host} field, a {@code Host} value that is not a URI host and port, or an
 *       HTTP/1.1 (or later minor version) request without one: 400 (RFC 9112 section 3.2). An empty
 *       {@code Host} is allowed, and HTTP/1.0 needs none.
 * </ul>
 *
 * Answers carry the version of {@link #answerVersion}: never one the request named that the server does
 * not speak. Stateless.
 */
public final class Http1Heads {
  private Http1Heads() {}

  /** Why a head cannot be served: the HTTP status to answer and its text (no trailing newline). */
  public record Problem(int status, String message) {}

  /** Why {@code req} cannot be served, or null when it can. */
  public static Problem check(HttpRequest req) {
    HttpVersion v = req.protocolVersion();
    if (v.majorVersion() != 1) {
      return new Problem(505, "HTTP version " + v.text() + " is not supported");
    }
    List<String> hosts = req.headers().getAll(HttpHeaderNames.HOST);
    if (hosts.size() > 1) {
      return new Problem(400, "request has more than one Host header field");
    }
    if (hosts.isEmpty()) {
      return v.minorVersion() >= 1
          ? new Problem(400, v.text() + " request has no Host header field")
          : null;
    }
    if (!isHostAndPort(hosts.get(0))) {
      return new Problem(400, "request has an invalid Host header field");
    }
    return null;
  }

  /**
   * The version an answer to the HTTP/1.x request {@code req} carries: HTTP/1.0 to an HTTP/1.0 request,
   * else HTTP/1.1, the highest this server speaks (RFC 9110 section 6.2); HTTP/1.1 when there is no
   * request.
   */
  public static HttpVersion answerVersion(HttpRequest req) {
    return req != null && HttpVersion.HTTP_1_0.equals(req.protocolVersion())
        ? HttpVersion.HTTP_1_0
        : HttpVersion.HTTP_1_1;
  }

  /**
   * The origin form of a request target ({@code /path?query}): {@code uri} itself, or, for the absolute
   * form a server must accept too ({@code http://host:port/path?query}, RFC 9112 section 3.2.2), the part
   * after its authority ({@code /} when that is empty).
   */
  public static String originForm(String uri) {
    int scheme = uri.indexOf("://");
    if (scheme <= 0 || uri.charAt(0) == '/') {
      return uri;
    }
    String s = uri.substring(0, scheme);
    if (!s.equalsIgnoreCase("http") && !s.equalsIgnoreCase("https")) {
      return uri;
    }
    int authorityEnd = scheme + 3;
    while (authorityEnd < uri.length()
        && uri.charAt(authorityEnd) != '/'
        && uri.charAt(authorityEnd) != '?') {
      authorityEnd++;
    }
    String rest = uri.substring(authorityEnd);
    return rest.isEmpty() || rest.charAt(0) == '?' ? "/" + rest : rest;
  }

  /**
   * Whether {@code host} is made only of what a URI's host and port may hold (RFC 3986 section 3.2.2:
   * letters, digits, {@code -._~}, sub-delimiters, {@code %} escapes, {@code :} and the brackets of an IP
   * literal), as Go's {@code httpguts.ValidHostHeader} checks; empty is allowed.
   */
  static boolean isHostAndPort(String host) {
    for (int i = 0; i < host.length(); i++) {
      char c = host.charAt(i);
      boolean ok =
          (c >= 'a' && c <= 'z')
              || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9')
              || "-._~!$&'()*+,;=%:[]".indexOf(c) >= 0;
      if (!ok) {
        return false;
      }
    }
    return true;
  }
}
