package io.yarpc.transport.tchannel.internal;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * init req (0x01) and init res (0x02): {@code version:2 nh:2 (k~2 v~2){nh}} (docs/spec/wire-tchannel.md §2).
 * This transport always sends all five keys.
 */
public final class InitFrames {
  /** Where this process can be reached: {@code a.b.c.d:port}, or {@code 0.0.0.0:0} when it does not listen. */
  public static final String HOST_PORT = "host_port";

  /** Free text naming the process, e.g. {@code java[1234]}. */
  public static final String PROCESS_NAME = "process_name";

  /** {@code java}. */
  public static final String LANGUAGE = "tchannel_language";

  /** The Java version. */
  public static final String LANGUAGE_VERSION = "tchannel_language_version";

  /** This library's version. */
  public static final String TCHANNEL_VERSION = "tchannel_version";

  /** The host_port of a process that does not listen. */
  public static final String EPHEMERAL_HOST_PORT = "0.0.0.0:0";

  private InitFrames() {}

  /** A parsed init frame. */
  public record Init(int version, Map<String, String> headers) {}

  /** Encodes an init req or res. */
  public static ByteBuf encode(
      ByteBufAllocator alloc, int type, int id, Map<String, String> headers) {
    int size = Frames.HEADER_SIZE + 4;
    byte[][] parts = new byte[headers.size() * 2][];
    int i = 0;
    for (Map.Entry<String, String> e : headers.entrySet()) {
      parts[i] = e.getKey().getBytes(UTF_8);
      parts[i + 1] = e.getValue().getBytes(UTF_8);
      size += 4 + parts[i].length + parts[i + 1].length;
      i += 2;
    }
    ByteBuf out = alloc.buffer(size);
    Frames.writeHeader(out, size, type, id);
    out.writeShort(Frames.VERSION);
    out.writeShort(headers.size());
    for (byte[] p : parts) {
      out.writeShort(p.length);
      out.writeBytes(p);
    }
    return out;
  }

  /**
   * The answer to a connection whose first bytes are {@code firstBytes}, when this side will not serve it
   * (a plaintext client of a port that requires TLS): a fatal error frame carrying {@code message}, with
   * the init req's id when the bytes show one. {@code null} when they do not start a TChannel init req
   * (too few bytes, another protocol): such a client is not answered. {@code firstBytes} is only read.
   */
  public static ByteBuf refusal(ByteBufAllocator alloc, ByteBuf firstBytes, String message) {
    int at = firstBytes.readerIndex();
    if (firstBytes.readableBytes() < 3
        || firstBytes.getUnsignedShort(at) < Frames.HEADER_SIZE
        || firstBytes.getUnsignedByte(at + 2) != Frames.INIT_REQ) {
      return null;
    }
    int id = firstBytes.readableBytes() >= 8 ? firstBytes.getInt(at + 4) : Frames.NULL_ID;
    return Frames.error(alloc, id, ErrorCodes.FATAL, null, message);
  }

  /**
   * Decodes an init req or res.
   *
   * @throws ProtocolException fatal when truncated
   */
  public static Init decode(ByteBuf frame) throws ProtocolException {
    ByteBuf in = frame.duplicate();
    in.skipBytes(Frames.HEADER_SIZE);
    if (in.readableBytes() < 4) {
      throw ProtocolException.fatal("frame too short: truncated init frame");
    }
    int version = in.readUnsignedShort();
    int count = in.readUnsignedShort();
    Map<String, String> headers = new LinkedHashMap<>();
    for (int i = 0; i < count; i++) {
      String key = readString(in);
      String value = readString(in);
      headers.put(key, value);
    }
    return new Init(version, headers);
  }

  private static String readString(ByteBuf in) throws ProtocolException {
    if (in.readableBytes() < 2) {
      throw ProtocolException.fatal("frame too short: truncated init header");
    }
    int length = in.readUnsignedShort();
    if (in.readableBytes() < length) {
      throw ProtocolException.fatal("frame too short: truncated init header");
    }
    String s = in.toString(in.readerIndex(), length, UTF_8);
    in.skipBytes(length);
    return s;
  }
}
