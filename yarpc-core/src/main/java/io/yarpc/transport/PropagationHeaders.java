package io.yarpc.transport;

/**
 * Where context-propagation headers ({@link RequestMeta#propagationHeaders()}) travel, and which keys an
 * inbound takes for them. Core knows no tracing library: these are plain string headers that tracing
 * middleware writes and reads through whatever propagation format it speaks; transports only move them.
 *
 * <p><b>On the wire</b>, each transport puts them where yarpc-go's tracer puts its headers, so that
 * yarpc-go peers and plain clients of each protocol interoperate (docs/spec/model.md §8.3):
 *
 * <table>
 *   <caption>Propagation headers by transport</caption>
 *   <tr><th>transport</th><th>outbound writes each key as</th><th>inbound reads</th></tr>
 *   <tr><td>HTTP</td><td>a plain HTTP header (not {@code Rpc-Header-}), Go's canonical casing on
 *       HTTP/1.1 ({@code Uber-Trace-Id}, {@code Traceparent})</td><td>every request header for which
 *       {@link #isPropagationKey} holds</td></tr>
 *   <tr><td>gRPC</td><td>request metadata, lower-case key</td><td>every metadata key for which {@link
 *       #isPropagationKey} holds</td></tr>
 *   <tr><td>TChannel</td><td>an arg2 header {@code $tracing$<key>} ({@code $tracing$uber-trace-id}),
 *       beside the application headers</td><td>every arg2 header with the {@code $tracing$} prefix,
 *       prefix removed</td></tr>
 * </table>
 *
 * <p>Keys read as propagation headers never appear among the application headers, and a propagation
 * header wins over an application header that the transport would write under the same wire name.
 */
public final class PropagationHeaders {
  private PropagationHeaders() {}

  /**
   * Whether an HTTP or gRPC inbound takes {@code key} (any casing) as a propagation header rather than an
   * application header: the keys of the propagation formats in common use —
   *
   * <ul>
   *   <li>W3C Trace Context and Baggage: {@code traceparent}, {@code tracestate}, {@code baggage};
   *   <li>Jaeger (yarpc-go's tracer): {@code uber-trace-id}, {@code uberctx-<key>} (baggage), {@code
   *       jaeger-debug-id}, {@code jaeger-baggage};
   *   <li>Zipkin B3: {@code b3}, {@code x-b3-traceid}, {@code x-b3-spanid}, {@code x-b3-parentspanid},
   *       {@code x-b3-sampled}, {@code x-b3-flags}.
   * </ul>
   */
  public static boolean isPropagationKey(String key) {
    int n = key.length();
    if (n < 2) {
      return false;
    }
    switch (Character.toLowerCase(key.charAt(0))) {
      case 't':
        return is(key, "traceparent") || is(key, "tracestate");
      case 'b':
        return is(key, "baggage") || is(key, "b3");
      case 'u':
        return is(key, "uber-trace-id") || n > 8 && startsWith(key, "uberctx-");
      case 'j':
        return is(key, "jaeger-debug-id") || is(key, "jaeger-baggage");
      case 'x':
        return n > 5
            && startsWith(key, "x-b3-")
            && (is(key, "x-b3-traceid")
                || is(key, "x-b3-spanid")
                || is(key, "x-b3-parentspanid")
                || is(key, "x-b3-sampled")
                || is(key, "x-b3-flags"));
      default:
        return false;
    }
  }

  private static boolean is(String key, String name) {
    return key.length() == name.length() && key.regionMatches(true, 0, name, 0, name.length());
  }

  private static boolean startsWith(String key, String prefix) {
    return key.regionMatches(true, 0, prefix, 0, prefix.length());
  }
}
