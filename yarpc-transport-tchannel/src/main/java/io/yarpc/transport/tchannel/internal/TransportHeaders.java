package io.yarpc.transport.tchannel.internal;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.netty.buffer.ByteBuf;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Call frames' transport headers, {@code nh:1 (hk~1 hv~1){nh}} (docs/spec/wire-tchannel.md §7.3), and the keys
 * YARPC uses.
 *
 * <p>Reading enforces the spec's limits as tchannel-node does, as fatal protocol errors: a key must not be
 * empty, at most {@value #MAX_KEY_SIZE} bytes, not repeated, and there are at most {@value
 * #MAX_HEADERS} headers. (tchannel-node really allows only 15-byte keys; this reader accepts the spec's
 * 16, and this transport only ever writes keys of at most 2 bytes.) Writing checks that keys and values
 * fit their one-byte lengths.
 */
public final class TransportHeaders {
  /** Arg scheme: the request's encoding. */
  public static final String ARG_SCHEME = "as";

  /** Caller name. */
  public static final String CALLER = "cn";

  /** Shard key. */
  public static final String SHARD_KEY = "sk";

  /** Routing key (defined by tchannel-go). */
  public static final String ROUTING_KEY = "rk";

  /** Routing delegate. */
  public static final String ROUTING_DELEGATE = "rd";

  /** The longest key the spec allows. */
  public static final int MAX_KEY_SIZE = 16;

  /** The most headers the spec allows. */
  public static final int MAX_HEADERS = 128;

  private TransportHeaders() {}

  /**
   * Reads the headers at {@code in}'s reader index, advancing it.
   *
   * @throws ProtocolException fatal, for truncated input, an empty, over-long or repeated key, or too many
   *     headers
   */
  public static Map<String, String> read(ByteBuf in) throws ProtocolException {
    if (!in.isReadable()) {
      throw ProtocolException.fatal("frame too short: missing transport header count");
    }
    int count = in.readUnsignedByte();
    if (count > MAX_HEADERS) {
      throw ProtocolException.fatal(
          "too many transport headers: " + count + " (at most " + MAX_HEADERS + ")");
    }
    Map<String, String> headers = new LinkedHashMap<>(count * 2);
    for (int i = 0; i < count; i++) {
      int keyLength = in.isReadable() ? in.getUnsignedByte(in.readerIndex()) : 0;
      String key = readString(in, "transport header key");
      if (key.isEmpty()) {
        throw ProtocolException.fatal("empty transport header key");
      }
      if (keyLength > MAX_KEY_SIZE) {
        throw ProtocolException.fatal(
            "transport header key " + key + " exceeds " + MAX_KEY_SIZE + " bytes");
      }
      String value = readString(in, "transport header value");
      if (headers.putIfAbsent(key, value) != null) {
        throw ProtocolException.fatal("duplicate transport header key " + key);
      }
    }
    return headers;
  }

  private static String readString(ByteBuf in, String what) throws ProtocolException {
    if (!in.isReadable()) {
      throw ProtocolException.fatal("frame too short: truncated " + what);
    }
    int length = in.readUnsignedByte();
    if (in.readableBytes() < length) {
      throw ProtocolException.fatal("frame too short: truncated " + what);
    }
    String s = in.toString(in.readerIndex(), length, UTF_8);
    in.skipBytes(length);
    return s;
  }

  /**
   * The wire bytes of a call res's transport headers, {@code as} alone (as {@link #encode} writes them).
   *
   * @throws YarpcException {@code invalid-argument} when the arg scheme is longer than 255 bytes
   */
  public static byte[] encodeArgScheme(String argScheme) {
    byte[] v = argScheme.getBytes(UTF_8);
    if (v.length > 0xFF) {
      return encode(Map.of(ARG_SCHEME, argScheme)); // throws the error encode gives
    }
    byte[] out = new byte[5 + v.length];
    out[0] = 1;
    out[1] = 2;
    out[2] = 'a';
    out[3] = 's';
    out[4] = (byte) v.length;
    System.arraycopy(v, 0, out, 5, v.length);
    return out;
  }

  /**
   * Encodes {@code headers} (insertion order) to their wire bytes.
   *
   * @throws YarpcException {@code invalid-argument} when a key or value is longer than 255 bytes or
   *     there are too many headers
   */
  public static byte[] encode(Map<String, String> headers) {
    if (headers.size() > MAX_HEADERS) {
      throw YarpcException.of(
          Code.INVALID_ARGUMENT, "too many tchannel transport headers: %d", headers.size());
    }
    int size = 1;
    byte[][] parts = new byte[headers.size() * 2][];
    int i = 0;
    for (Map.Entry<String, String> e : headers.entrySet()) {
      byte[] k = e.getKey().getBytes(UTF_8);
      byte[] v = e.getValue().getBytes(UTF_8);
      if (k.length == 0 || k.length > MAX_KEY_SIZE - 1) {
        throw YarpcException.of(
            Code.INVALID_ARGUMENT,
            "tchannel transport header key %s must have 1 to 15 bytes",
            e.getKey());
      }
      if (v.length > 0xFF) {
        throw YarpcException.of(
            Code.INVALID_ARGUMENT,
            "tchannel transport header %s is %d bytes long, longer than 255 bytes",
            e.getKey(),
            v.length);
      }
      parts[i++] = k;
      parts[i++] = v;
      size += 2 + k.length + v.length;
    }
    byte[] out = new byte[size];
    out[0] = (byte) headers.size();
    int pos = 1;
    for (byte[] p : parts) {
      out[pos++] = (byte) p.length;
      System.arraycopy(p, 0, out, pos, p.length);
      pos += p.length;
    }
    return out;
  }
}
