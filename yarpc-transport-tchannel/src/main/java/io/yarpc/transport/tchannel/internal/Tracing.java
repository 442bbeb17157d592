package io.yarpc.transport.tchannel.internal;

import io.yarpc.transport.Headers;
import java.net.URLDecoder;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The 25-byte tracing field ({@code spanid:8 parentid:8 traceid:8 traceflags:1}, docs/spec/wire-tchannel.md
 * §7.2). Modern tracing context travels in arg2 as {@code $tracing$} headers; this field is kept for
 * tchannel-go, which reads it first when its tracer speaks Zipkin-style ids (Jaeger does) and falls back to
 * the headers when its trace id is 0 (docs/spec/model.md §8.3). So an outbound call req carries:
 *
 * <ul>
 *   <li>without propagation headers (no tracing installed): a new root span as tchannel-node starts one
 *       (trace id = span id, parent 0, not sampled);
 *   <li>with propagation headers whose trace id fits in 64 bits (a Jaeger trace begun by a 64-bit
 *       tracer): the same ids, so such a peer continues the trace from either place;
 *   <li>with a 128-bit trace id (OpenTelemetry's, W3C's): zeros, so a Jaeger-backed tchannel-go server
 *       ignores the field and reads the whole trace id from the headers instead of its low half.
 * </ul>
 *
 * Responses and error frames echo the request's bytes.
 */
final class Tracing {
  private Tracing() {}

  private static final byte[] ZEROS = new byte[Frames.TRACING_SIZE];

  /** A new root span. */
  public static byte[] newRoot() {
    long span = ThreadLocalRandom.current().nextLong();
    return field(span, 0, span, (byte) 0);
  }

  /** The field for a call req that carries {@code propagation} (see the class comment). */
  public static byte[] forRequest(Headers propagation) {
    if (propagation.isEmpty()) {
      return newRoot();
    }
    long[] ids = fromTraceparent(propagation.get("traceparent"));
    if (ids == null) {
      ids = fromUberTraceId(propagation.get("uber-trace-id"));
    }
    if (ids == null || ids[0] != 0) {
      return ZEROS.clone();
    }
    return field(ids[2], ids[3], ids[1], (byte) ids[4]);
  }

  private static byte[] field(long span, long parent, long trace, byte flags) {
    return ByteBuffer.allocate(Frames.TRACING_SIZE)
        .putLong(span)
        .putLong(parent)
        .putLong(trace)
        .put(flags)
        .array();
  }

  /**
   * {@code {traceHigh, traceLow, span, parent, flags}} of a W3C {@code traceparent} ({@code
   * 00-<32 hex>-<16 hex>-<2 hex>}), or null when it is absent or malformed.
   */
  static long[] fromTraceparent(String value) {
    if (value == null
        || value.length() < 55
        || value.charAt(2) != '-'
        || value.charAt(35) != '-'
        || value.charAt(52) != '-') {
      return null;
    }
    try {
      long high = Long.parseUnsignedLong(value.substring(3, 19), 16);
      long low = Long.parseUnsignedLong(value.substring(19, 35), 16);
      long span = Long.parseUnsignedLong(value.substring(36, 52), 16);
      int flags = Integer.parseInt(value.substring(53, 55), 16);
      if (high == 0 && low == 0 || span == 0) {
        return null;
      }
      return new long[] {high, low, span, 0, flags & 0x01};
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /**
   * {@code {traceHigh, traceLow, span, parent, flags}} of a Jaeger {@code uber-trace-id} ({@code
   * trace:span:parent:flags}, hex; URL-encoded when it holds no {@code :}), or null when it is absent or
   * malformed.
   */
  static long[] fromUberTraceId(String value) {
    if (value == null || value.isEmpty()) {
      return null;
    }
    if (value.indexOf(':') < 0) {
      try {
        value = URLDecoder.decode(value, StandardCharsets.UTF_8);
      } catch (IllegalArgumentException e) {
        return null;
      }
    }
    String[] parts = value.split(":", -1);
    if (parts.length != 4
        || parts[0].isEmpty()
        || parts[0].length() > 32
        || parts[1].isEmpty()
        || parts[1].length() > 16
        || parts[2].length() > 16
        || parts[3].isEmpty()
        || parts[3].length() > 2) {
      return null;
    }
    try {
      String trace = parts[0];
      int split = Math.max(0, trace.length() - 16);
      long high = split == 0 ? 0 : Long.parseUnsignedLong(trace.substring(0, split), 16);
      long low = Long.parseUnsignedLong(trace.substring(split), 16);
      long span = Long.parseUnsignedLong(parts[1], 16);
      long parent = parts[2].isEmpty() ? 0 : Long.parseUnsignedLong(parts[2], 16);
      int flags = Integer.parseInt(parts[3], 16);
      if (high == 0 && low == 0 || span == 0) {
        return null;
      }
      return new long[] {high, low, span, parent, flags & 0x01};
    } catch (NumberFormatException e) {
      return null;
    }
  }
}
