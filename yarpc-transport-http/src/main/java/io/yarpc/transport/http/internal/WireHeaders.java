package io.yarpc.transport.http.internal;

import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.AsciiString;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.GoStrings;
import io.yarpc.transport.Headers;
import io.yarpc.transport.PropagationHeaders;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.Map;

/**
 * The yarpc-go HTTP wire vocabulary (docs/spec/wire-http.md §3.1 and §3.3): header names, content types
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
  static boolean isTracingHeader(CharSequence key) {
    return AsciiString.contentEqualsIgnoreCase(key, "uber-trace-id")
        || startsWithIgnoreCase(key, "uberctx-");
  }

  /** Cross-zone routing keys are sent unprefixed (and only accepted prefixed). */
  static boolean isRoutingHeader(String lowerKey) {
    return lowerKey.equals("rpc-routing-region") || lowerKey.equals("rpc-routing-zone");
  }

  /** The proxy-managed keys, which travel unprefixed. */
  private static final String[] PROXY_HEADERS = {
    "x-forwarded-for",
    "x-forwarded-proto",
    "x-forwarded-port",
    "x-request-id",
    "x-uber-source",
    "via",
    "user-agent"
  };

  /** Proxy-managed keys travel unprefixed (matched in any casing, with no lower-cased copy). */
  static boolean isProxyHeader(CharSequence key) {
    for (String proxy : PROXY_HEADERS) {
      if (AsciiString.contentEqualsIgnoreCase(key, proxy)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether a received request header can never be an application or propagation header: the {@code
   * Rpc-*} headers but {@code Rpc-Header-*}, {@code Content-*}, {@code Context-TTL-MS} and {@code Host},
   * which the transport itself reads. Lets {@link #read} skip them without making a string of their
   * names.
   */
  private static boolean isTransportHeader(CharSequence key) {
    return startsWithIgnoreCase(key, "rpc-")
            && !startsWithIgnoreCase(key, APPLICATION_HEADER_PREFIX)
        || startsWithIgnoreCase(key, "content-")
        || AsciiString.contentEqualsIgnoreCase(key, "host");
  }

  static boolean startsWithIgnoreCase(CharSequence s, String prefix) {
    return s.length() >= prefix.length()
        && AsciiString.regionMatches(s, true, 0, prefix, 0, prefix.length());
  }

  /**
   * Application headers from received HTTP headers: first the unprefixed tracing and proxy headers, then
   * every {@code Rpc-Header-*} (prefix matched case-insensitively, stripped), so a prefixed value wins.
   * For responses; a request's headers are read by {@link #requestHeaders}.
   */
  public static Headers applicationHeaders(HttpHeaders from) {
    return read(from, null);
  }

  /** The application and propagation headers of a request. */
  public record RequestHeaders(Headers application, Headers propagation) {}

  /**
   * A request's headers: the propagation headers are every plain header for which {@link
   * PropagationHeaders#isPropagationKey} holds ({@code traceparent}, {@code uber-trace-id}, {@code
   * uberctx-*}...: where yarpc-go's tracer writes them); the application headers are the unprefixed proxy
   * headers and then every {@code Rpc-Header-*}, as {@link #applicationHeaders} reads them, but without
   * the unprefixed tracing keys, which are propagation headers now (docs/spec/model.md §8.3).
   */
  public static RequestHeaders requestHeaders(HttpHeaders from) {
    Headers.Builder[] propagation = new Headers.Builder[1];
    Headers application = read(from, propagation);
    return new RequestHeaders(
        application, propagation[0] == null ? Headers.empty() : propagation[0].build());
  }

  /**
   * The application headers in {@code from}; when {@code propagation} is not null, propagation keys go to
   * the builder in its first element (made on first use) instead.
   */
  private static Headers read(HttpHeaders from, Headers.Builder[] propagation) {
    Headers.Builder b = null;
    Iterator<Map.Entry<CharSequence, CharSequence>> it = from.iteratorCharSequence();
    boolean prefixed = false;
    while (it.hasNext()) {
      Map.Entry<CharSequence, CharSequence> e = it.next();
      CharSequence name = e.getKey();
      if (isTransportHeader(name)) {
        continue; // most of a request's fields: no string made of their names
      }
      if (startsWithIgnoreCase(name, APPLICATION_HEADER_PREFIX)) {
        prefixed = true; // read in the second pass, so that a prefixed value wins
        continue;
      }
      String key = name.toString();
      if (propagation != null && PropagationHeaders.isPropagationKey(key)) {
        if (propagation[0] == null) {
          propagation[0] = Headers.builder();
        }
        propagation[0].add(key, fromWire(e.getValue()));
      } else if (isTracingHeader(key) || isProxyHeader(key)) {
        b = b == null ? Headers.builder() : b;
        b.add(key, fromWire(e.getValue()));
      }
    }
    if (prefixed) {
      it = from.iteratorCharSequence();
      while (it.hasNext()) {
        Map.Entry<CharSequence, CharSequence> e = it.next();
        CharSequence name = e.getKey();
        if (name.length() > APPLICATION_HEADER_PREFIX.length()
            && startsWithIgnoreCase(name, APPLICATION_HEADER_PREFIX)) {
          b = b == null ? Headers.builder() : b;
          b.add(
              name.subSequence(APPLICATION_HEADER_PREFIX.length(), name.length()).toString(),
              fromWire(e.getValue()));
        }
      }
    }
    return b == null ? Headers.empty() : b.build();
  }

  /**
   * Writes a request's propagation headers as plain HTTP headers, in Go's canonical casing, where yarpc-go's
   * tracer writes them ({@code tracer.Inject(..., HTTPHeaders, req.Header)}, docs/spec/model.md §8.3);
   * each replaces a header of the same name written before (an application header {@code uber-trace-id}
   * travels unprefixed too). A key that is not an HTTP token, or that names a header this transport owns
   * ({@code Rpc-*}, {@code Context-TTL-MS}, {@code Host}, {@code Content-*}, hop-by-hop headers), is
   * skipped: propagation never fails a call.
   */
  public static void writePropagationHeaders(Headers headers, HttpHeaders to) {
    headers.forEach(
        (key, value) -> {
          if (isToken(key) && !isOwnedHeader(key)) {
            to.set(canonicalMimeKey(key), sanitizeValue(value));
          }
        });
  }

  /** Whether a (lower-case) header name is one the transport itself writes or HTTP reserves. */
  private static boolean isOwnedHeader(String lowerKey) {
    if (lowerKey.startsWith("rpc-") || lowerKey.startsWith("content-")) {
      return true;
    }
    switch (lowerKey) {
      case "context-ttl-ms":
      case "host":
      case "connection":
      case "keep-alive":
      case "transfer-encoding":
      case "te":
      case "trailer":
      case "upgrade":
      case "proxy-connection":
        return true;
      default:
        return false;
    }
  }

  /**
   * Writes application headers: tracing, cross-zone routing and proxy keys unprefixed, every other key
   * as {@code Rpc-Header-<key>}; keys are lower-cased and then put in Go's canonical MIME form, as yarpc-go
   * sends them. HTTP/2 pseudo-headers ({@code :authority}...) are dropped.
   */
  public static void writeApplicationHeaders(Headers headers, HttpHeaders to) {
    headers.forEach(
        (key, value) -> {
          if (key.startsWith(":") || !isToken(key)) {
            return; // requests were checked up front (checkApplicationHeaders); a response cannot
            // report it
          }
          String name =
              isTracingHeader(key) || isRoutingHeader(key) || isProxyHeader(key)
                  ? key
                  : APPLICATION_HEADER_PREFIX + key;
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
   * Fails when an application header cannot go in an HTTP request as it is, as Go's HTTP client refuses
   * it ({@code net/http: invalid header field name} / {@code value}): a name that is not an RFC 9110 token,
   * or a value holding a control character other than tab (CR, LF, NUL, DEL...). Non-ASCII values are
   * fine: they travel as UTF-8 ({@link #sanitizeValue}). Outbounds check before they build the request.
   *
   * @throws YarpcException {@code invalid-argument} {@code invalid HTTP header name "..."} or {@code invalid
   *     HTTP header field value for "...": it holds a control character}
   */
  public static void checkApplicationHeaders(Headers headers) {
    headers.forEach(
        (key, value) -> {
          if (key.startsWith(":")) {
            return;
          }
          if (!isToken(key)) {
            throw YarpcException.of(
                Code.INVALID_ARGUMENT, "invalid HTTP header name %s", GoStrings.quote(key));
          }
          for (int i = 0; i < value.length(); i++) {
            if (isControl(value.charAt(i))) {
              throw YarpcException.of(
                  Code.INVALID_ARGUMENT,
                  "invalid HTTP header field value for %s: it holds a control character",
                  GoStrings.quote(key));
            }
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
   * A text as an HTTP field value on the wire, written the way yarpc-go's Go HTTP stack writes it, so a text
   * that holds anything always makes a valid field (spec notes: RFC 9110 section 5.5, Go net/http):
   *
   * <ul>
   *   <li>Non-ASCII text goes as its UTF-8 bytes, one char per byte because Netty writes each char as one
   *       byte: Go writes a string's bytes as they are, and field values may hold octets 0x80-0xFF
   *       ({@code obs-text}). {@link #fromWire} turns them back into the text.
   *   <li>CR and LF become spaces, as Go's net/http does when it writes HTTP/1.1 headers (header.go,
   *       {@code headerNewlineToSpace}). So do NUL, every other control character but tab, and DEL, which
   *       no field value may hold: RFC 9110 lets a recipient replace CR, LF and NUL with spaces, and Netty
   *       refuses them (Go would write them raw, and Go's own reader then rejects the response:
   *       {@code textproto} {@code readMIMEHeader}, "malformed MIME header line").
   *   <li>Spaces and tabs at either end are removed, as Go does right after ({@code textproto.TrimString});
   *       a field value cannot start or end with whitespace, and Netty refuses a leading one.
   * </ul>
   *
   * <p>Go's HTTP/2 server ({@code golang.org/x/net/http2}, {@code encodeHeaders}) omits a value that fails
   * {@code httpguts.ValidHeaderFieldValue} instead. This transport writes the replaced value on HTTP/2 too,
   * so the text still arrives; a Go client accepts it.
   */
  public static String sanitizeValue(String value) {
    if (isFieldValue(value)) {
      return value;
    }
    byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
    char[] chars = new char[utf8.length];
    for (int i = 0; i < utf8.length; i++) {
      int b = utf8[i] & 0xff;
      chars[i] = isControl(b) ? ' ' : (char) b;
    }
    int start = 0;
    int end = chars.length;
    while (start < end && isSpaceOrTab(chars[start])) {
      start++;
    }
    while (end > start && isSpaceOrTab(chars[end - 1])) {
      end--;
    }
    return new String(chars, start, end - start);
  }

  /** Whether {@code value} is printable ASCII, tab inside, and no whitespace at either end. */
  private static boolean isFieldValue(String value) {
    int n = value.length();
    if (n > 0 && (isSpaceOrTab(value.charAt(0)) || isSpaceOrTab(value.charAt(n - 1)))) {
      return false;
    }
    for (int i = 0; i < n; i++) {
      char c = value.charAt(i);
      if (c >= 0x7f || isControl(c)) {
        return false;
      }
    }
    return true;
  }

  /** A control character no field value may hold: any below 0x20 but tab, and DEL. */
  private static boolean isControl(int c) {
    return c < 0x20 && c != '\t' || c == 0x7f;
  }

  private static boolean isSpaceOrTab(char c) {
    return c == ' ' || c == '\t';
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
}
