package io.yarpc.transport.tchannel.internal;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.yarpc.internal.WireText;

/**
 * TChannel protocol v2 frame layout: the 16-byte header ({@code size:2 type:1 reserved:1 id:4
 * reserved:8}), frame types, flags, limits, and the small fixed-layout frames (error, ping, cancel).
 * All integers are big-endian; {@code size} counts the header.
 */
public final class Frames {
  /** Bytes in every frame's header. */
  public static final int HEADER_SIZE = 16;

  /** The largest frame: {@code size} is a 16-bit field. */
  public static final int MAX_FRAME_SIZE = 0xFFFF;

  /** The message id for errors that belong to no message. */
  public static final int NULL_ID = 0xFFFFFFFF;

  /** init req. */
  public static final int INIT_REQ = 0x01;

  /** init res. */
  public static final int INIT_RES = 0x02;

  /** call req. */
  public static final int CALL_REQ = 0x03;

  /** call res. */
  public static final int CALL_RES = 0x04;

  /** call req continue. */
  public static final int CALL_REQ_CONTINUE = 0x13;

  /** call res continue. */
  public static final int CALL_RES_CONTINUE = 0x14;

  /** cancel. */
  public static final int CANCEL = 0xC0;

  /** claim. */
  public static final int CLAIM = 0xC1;

  /** ping req. */
  public static final int PING_REQ = 0xD0;

  /** ping res. */
  public static final int PING_RES = 0xD1;

  /** error. */
  public static final int ERROR = 0xFF;

  /** Flag bit: more fragments of this message follow. */
  public static final int FLAG_MORE_FRAGMENTS = 0x01;

  /** Bytes of the tracing field. */
  public static final int TRACING_SIZE = 25;

  /** The largest arg1 (procedure name) the spec allows. */
  public static final int MAX_ARG1_SIZE = 0x4000;

  /** The protocol version. */
  public static final int VERSION = 2;

  private Frames() {}

  /** Writes a frame header. */
  public static void writeHeader(ByteBuf out, int size, int type, int id) {
    out.writeShort(size);
    out.writeByte(type);
    out.writeByte(0);
    out.writeInt(id);
    out.writeLong(0);
  }

  /** The frame's type byte. */
  public static int type(ByteBuf frame) {
    return frame.getUnsignedByte(frame.readerIndex() + 2);
  }

  /** The frame's message id. */
  public static int id(ByteBuf frame) {
    return frame.getInt(frame.readerIndex() + 4);
  }

  /** The id as the unsigned number people read. */
  public static String idString(int id) {
    return Integer.toUnsignedString(id);
  }

  /** A frame's type as text, for messages. */
  public static String typeName(int type) {
    switch (type) {
      case INIT_REQ:
        return "init req";
      case INIT_RES:
        return "init res";
      case CALL_REQ:
        return "call req";
      case CALL_RES:
        return "call res";
      case CALL_REQ_CONTINUE:
        return "call req continue";
      case CALL_RES_CONTINUE:
        return "call res continue";
      case CANCEL:
        return "cancel";
      case CLAIM:
        return "claim";
      case PING_REQ:
        return "ping req";
      case PING_RES:
        return "ping res";
      case ERROR:
        return "error";
      default:
        return "type 0x" + Integer.toHexString(type);
    }
  }

  /**
   * An error frame: {@code code:1 tracing:25 message~2}. A message longer than one frame holds is cut by
   * core's rule ({@link WireText#truncate}: whole characters, then {@code " (truncated)"}).
   *
   * @param tracing 25 bytes, or {@code null} for zeros
   */
  public static ByteBuf error(
      ByteBufAllocator alloc, int id, int code, byte[] tracing, String message) {
    int max = MAX_FRAME_SIZE - HEADER_SIZE - 1 - TRACING_SIZE - 2;
    byte[] text =
        WireText.truncate(message == null ? "" : message, max, WireText::utf8Length)
            .getBytes(UTF_8);
    int length = text.length;
    int size = HEADER_SIZE + 1 + TRACING_SIZE + 2 + length;
    ByteBuf out = alloc.buffer(size);
    writeHeader(out, size, ERROR, id);
    out.writeByte(code);
    writeTracing(out, tracing);
    out.writeShort(length);
    out.writeBytes(text, 0, length);
    return out;
  }

  /** A frame with an empty payload (ping req, ping res). */
  public static ByteBuf empty(ByteBufAllocator alloc, int type, int id) {
    ByteBuf out = alloc.buffer(HEADER_SIZE);
    writeHeader(out, HEADER_SIZE, type, id);
    return out;
  }

  /** A cancel frame: {@code ttl:4 tracing:25 why~2}. */
  public static ByteBuf cancel(
      ByteBufAllocator alloc, int id, long ttlMillis, byte[] tracing, String why) {
    byte[] text = (why == null ? "" : why).getBytes(UTF_8);
    int length = Math.min(text.length, 1024);
    int size = HEADER_SIZE + 4 + TRACING_SIZE + 2 + length;
    ByteBuf out = alloc.buffer(size);
    writeHeader(out, size, CANCEL, id);
    out.writeInt((int) Math.max(0, Math.min(0xFFFFFFFFL, ttlMillis)));
    writeTracing(out, tracing);
    out.writeShort(length);
    out.writeBytes(text, 0, length);
    return out;
  }

  /** Whether frames of {@code type} carry a call message: call req, call res and their continuations. */
  static boolean isCallFrame(int type) {
    return type == CALL_REQ
        || type == CALL_REQ_CONTINUE
        || type == CALL_RES
        || type == CALL_RES_CONTINUE;
  }

  /** Whether a frame's flags byte (the first payload byte of call frames) says more fragments follow. */
  static boolean moreFragments(ByteBuf frame) {
    return frame.readableBytes() > HEADER_SIZE
        && (frame.getUnsignedByte(frame.readerIndex() + HEADER_SIZE) & FLAG_MORE_FRAGMENTS) != 0;
  }

  /** An error frame's message, as much of it as the frame holds (empty when there is none). */
  static String errorMessage(ByteBuf frame) {
    int start = frame.readerIndex() + HEADER_SIZE + 1 + TRACING_SIZE;
    int end = frame.readerIndex() + frame.readableBytes();
    if (end - start < 2) {
      return "";
    }
    int length = Math.min(frame.getUnsignedShort(start), end - start - 2);
    return frame.toString(start + 2, length, UTF_8);
  }

  /** Writes 25 tracing bytes, zeros when {@code tracing} is null. */
  public static void writeTracing(ByteBuf out, byte[] tracing) {
    if (tracing == null) {
      out.writeZero(TRACING_SIZE);
    } else {
      out.writeBytes(tracing, 0, TRACING_SIZE);
    }
  }
}
