package io.yarpc.transport.http.internal;

import io.netty.handler.codec.http.HttpHeaders;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.GoStrings;
import io.yarpc.transport.Headers;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.Map;

/**
 * The yarpc-go HTTP wire vocabulary (spec {@code wire-http.md} 3.1 and 3.3): header names, content types
 * by encoding, and the mapping between YARPC application headers and HTTP headers in both directions.
 * Header names are written in Go's canonical MIME casing (HTTP/2 lower-cases them on the wire); they are
 * matched case-insensitively when read.
 */
public final class WireHeaders {
  private WireHeaders() {}

  public static final String CALLER = "Rpc-Caller";
  public static final String SERVICE = "Rpc-Service";
  public static final String PROCEDURE = "Rpc-Procedure";
  public static final String ENCODING = "Rpc-Encoding";
  public static final String TTL_MS = "Context-TTL-MS";
  public static final String SHARD_KEY = "Rpc-Shard-Key";
  public static final String ROUTING_KEY = "Rpc-Routing-Key";
  public static final String ROUTING_DELEGATE = "Rpc-Routing-Delegate";
  public static final String CALLER_PROCEDURE = "Rpc-Caller-Procedure";
  public static final String ACCEPTS_BOTH_RESPONSE_ERROR = "Rpc-Accepts-Both-Response-Error";
  public static final String BOTH_RESPONSE_ERROR = "Rpc-Both-Response-Error";
  public static final String STATUS = "Rpc-Status";
  public static final String ERROR_CODE = "Rpc-Error-Code";
  public static final String ERROR_NAME = "Rpc-Error-Name";
  public static final String ERROR_MESSAGE = "Rpc-Error-Message";
  public static final String ERROR_DETAILS = "Grpc-Status-Details-Bin";
  public static final String APPLICATION_ERROR_CODE = "Rpc-Application-Error-Code";
  public static final String APPLICATION_ERROR_NAME = "Rpc-Application-Error-Name";
  public static final String APPLICATION_ERROR_DETAILS = "Rpc-Application-Error-Details";
  public static final String APPLICATION_HEADER_PREFIX = "Rpc-Header-";

  public static final String STATUS_SUCCESS = "success";
  public static final String STATUS_ERROR = "error";
  public static final String TRUE = "true";

  /** The error body's content type when the client does not accept both response and error. */
  public static final String TEXT_PLAIN = "text/plain; charset=utf8";

  /** Longest {@code Rpc-Application-Error-Details} value, in bytes, and the marker a longer one ends with. */
  static final int MAX_APP_ERROR_DETAILS = 256;
  static final String TRUNCATED = " (truncated)";

  /** {@code Content-Type} of a successful response by request encoding, or null for none. */
  public static String contentType(String encoding) {
    switch (encoding) {
      case "json":
        return "application/json";
      case "raw":
        return "application/octet-stream";
      case "thrift":
        return "application/vnd.apache.thrift.binary";
      case "proto":
        return "application/x-protobuf";
      default:
        return null;
    }
  }

  /** Tracing keys travel unprefixed: {@code uber-trace-id} and {@code uberctx-*}. */
  static boolean isTracingHeader(String key) {
    return key.equalsIgnoreCase("uber-trace-id") || startsWithIgnoreCase(key, "uberctx-");
  }

  /** Cross-zone routing keys are sent unprefixed (and only accepted prefixed). */
  static boolean isRoutingHeader(String lowerKey) {
    return lowerKey.equals("rpc-routing-region") || lowerKey.equals("rpc-routing-zone");
  }

  /** Proxy-managed keys travel unprefixed. */
  static boolean isProxyHeader(String key) {
    switch (key.toLowerCase(java.util.Locale.ROOT)) {
      case "x-forwarded-for":
      case "x-forwarded-proto":
      case "x-forwarded-port":
      case "x-request-id":
      case "x-uber-source":
      case "via":
      case "user-agent":
        return true;
      default:
        return false;
    }
  }

  static boolean startsWithIgnoreCase(String s, String prefix) {
    return s.regionMatches(true, 0, prefix, 0, prefix.length());
  }

  /**
   * Application headers from received HTTP headers: first the unprefixed tracing and proxy headers, then
   * every {@code Rpc-Header-*} (prefix matched case-insensitively, stripped), so a prefixed value wins.
   */
  public static Headers applicationHeaders(HttpHeaders from) {
    Headers.Builder b = null;
    Iterator<Map.Entry<CharSequence, CharSequence>> it = from.iteratorCharSequence();
    boolean prefixed = false;
    while (it.hasNext()) {
      Map.Entry<CharSequence, CharSequence> e = it.next();
      String key = e.getKey().toString();
      if (isTracingHeader(key) || isProxyHeader(key)) {
        b = b == null ? Headers.builder() : b;
        b.add(key, fromWire(e.getValue()));
      } else if (!prefixed && startsWithIgnoreCase(key, APPLICATION_HEADER_PREFIX)) {
        prefixed = true;
      }
    }
    if (prefixed) {
      it = from.iteratorCharSequence();
      while (it.hasNext()) {
        Map.Entry<CharSequence, CharSequence> e = it.next();
        String key = e.getKey().toString();
        if (key.length() > APPLICATION_HEADER_PREFIX.length()
            && startsWithIgnoreCase(key, APPLICATION_HEADER_PREFIX)) {
          b = b == null ? Headers.builder() : b;
          b.add(key.substring(APPLICATION_HEADER_PREFIX.length()), fromWire(e.getValue()));
        }
      }
    }
    return b == null ? Headers.empty() : b.build();
  }

  /**
   * Writes application headers: tracing, cross-zone routing and proxy keys unprefixed, every other key
   * as {@code Rpc-Header-<key>}; keys are lower-cased and then put in Go's canonical MIME form, as yarpc-go
   * sends them. HTTP/2 pseudo-headers ({@code :authority}...) are dropped.
   */
  public static void writeApplicationHeaders(Headers headers, HttpHeaders to) {
    headers.forEach((key, value) -> {
      if (key.startsWith(":") || !isToken(key)) {
        return; // requests were checked up front (checkApplicationHeaders); a response cannot report it
      }
      String name = isTracingHeader(key) || isRoutingHeader(key) || isProxyHeader(key)
          ? key : APPLICATION_HEADER_PREFIX + key;
      to.add(canonicalMimeKey(name), sanitizeValue(value));
    });
  }

  /**
   * Go's {@code textproto.CanonicalMIMEHeaderKey}: the first letter and every letter after a hyphen upper
   * case, the rest lower case; a key holding a character that is not a token character stays as it is.
   */
  public static String canonicalMimeKey(String key) {
    for (int i = 0; i < key.length(); i++) {
      if (!isTokenChar(key.charAt(i))) {
        return key;
      }
    }
    char[] chars = key.toCharArray();
    boolean upper = true;
    for (int i = 0; i < chars.length; i++) {
      char c = chars[i];
      if (upper && c >= 'a' && c <= 'z') {
        c = (char) (c - ('a' - 'A'));
      } else if (!upper && c >= 'A' && c <= 'Z') {
        c = (char) (c + ('a' - 'A'));
      }
      chars[i] = c;
      upper = c == '-';
    }
    return new String(chars);
  }

  /**
   * Fails when an application header name cannot be an HTTP header name (RFC 9110 token characters), as
   * Go's HTTP client refuses it; outbounds check before they build the request.
   *
   * @throws YarpcException {@code invalid-argument} {@code invalid HTTP header name "..."}
   */
  public static void checkApplicationHeaders(Headers headers) {
    headers.forEach((key, value) -> {
      if (!key.startsWith(":") && !isToken(key)) {
        throw YarpcException.of(Code.INVALID_ARGUMENT, "invalid HTTP header name %s", GoStrings.quote(key));
      }
    });
  }

  private static boolean isToken(String name) {
    if (name.isEmpty()) {
      return false;
    }
    for (int i = 0; i < name.length(); i++) {
      if (!isTokenChar(name.charAt(i))) {
        return false;
      }
    }
    return true;
  }

  private static boolean isTokenChar(char c) {
    if (c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
      return true;
    }
    return "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
  }

  /**
   * A header value as it goes on the wire: the UTF-8 bytes of {@code value} (Go writes header values as
   * raw bytes), one char per byte because Netty writes each char as one byte; control characters other
   * than tab (CR and LF included) become spaces, as Go's server does with line breaks, since they cannot
   * appear in a header value.
   */
  public static String sanitizeValue(String value) {
    boolean plain = true;
    for (int i = 0; i < value.length() && plain; i++) {
      char c = value.charAt(i);
      plain = c >= 0x20 && c < 0x7f || c == '\t';
    }
    if (plain) {
      return value;
    }
    byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
    char[] chars = new char[utf8.length];
    for (int i = 0; i < utf8.length; i++) {
      int b = utf8[i] & 0xff;
      chars[i] = b < 0x20 && b != '\t' || b == 0x7f ? ' ' : (char) b;
    }
    return new String(chars);
  }

  /** A received header value (one char per byte) decoded as UTF-8; the inverse of {@link #sanitizeValue}. */
  public static String fromWire(CharSequence value) {
    if (value == null) {
      return null;
    }
    String s = value.toString();
    for (int i = 0; i < s.length(); i++) {
      if (s.charAt(i) >= 0x80) {
        return new String(s.getBytes(StandardCharsets.ISO_8859_1), StandardCharsets.UTF_8);
      }
    }
    return s;
  }

  /** The received value of header {@code name} (any casing) decoded by {@link #fromWire}, or {@code ""}. */
  public static String get(HttpHeaders headers, String name) {
    String v = headers.get(name);
    return v == null ? "" : fromWire(v);
  }

  /** {@code details} cut to 256 UTF-8 bytes ending in {@code " (truncated)"} when longer, as yarpc-go does. */
  static String truncateDetails(String details) {
    byte[] bytes = details.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    if (bytes.length <= MAX_APP_ERROR_DETAILS) {
      return details;
    }
    int keep = MAX_APP_ERROR_DETAILS - TRUNCATED.length();
    // do not cut a multi-byte character in half
    while (keep > 0 && (bytes[keep] & 0xC0) == 0x80) {
      keep--;
    }
    return new String(bytes, 0, keep, java.nio.charset.StandardCharsets.UTF_8) + TRUNCATED;
  }
}
