package io.yarpc.transport.tchannel.internal;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.netty.buffer.ByteBuf;
import io.yarpc.transport.tchannel.ChecksumType;
import java.util.Map;

/**
 * One parsed frame of a call message: a call req (0x03), call res (0x04) or one of their continuations
 * (0x13, 0x14). The fixed fields are decoded; the arg chunks are left in the frame and located by index,
 * so nothing is retained or copied until the {@link MessageAssembler} takes {@link #retainedChunk
 * retained views} of them. A {@code CallFrame} does not own its frame buffer: it is valid while the
 * caller holds the frame.
 */
public final class CallFrame {
  /** The most chunks one frame may carry: one per arg. */
  static final int MAX_CHUNKS = 3;

  private final ByteBuf frame;
  private final int type;
  private final int id;
  private final int flags;
  private final long ttl;
  private final int code;
  private final byte[] tracing;
  private final String service;
  private final Map<String, String> headers;
  private final ChecksumType checksumType;
  private final int checksum;
  // the chunks' indices and lengths: fields rather than arrays, one object per frame
  private int index0;
  private int index1;
  private int index2;
  private int length0;
  private int length1;
  private int length2;
  private int chunkCount;

  private CallFrame(
      ByteBuf frame,
      int type,
      int id,
      int flags,
      long ttl,
      int code,
      byte[] tracing,
      String service,
      Map<String, String> headers,
      ChecksumType checksumType,
      int checksum) {
    this.frame = frame;
    this.type = type;
    this.id = id;
    this.flags = flags;
    this.ttl = ttl;
    this.code = code;
    this.tracing = tracing;
    this.service = service;
    this.headers = headers;
    this.checksumType = checksumType;
    this.checksum = checksum;
  }

  /**
   * Parses {@code frame} (a whole frame, header included, of type 0x03, 0x04, 0x13 or 0x14).
   *
   * @throws ProtocolException fatal when the payload cannot be parsed (truncated fields, bad transport
   *     headers, an unknown checksum type); a bad request when the frame has more than three chunks
   */
  public static CallFrame parse(ByteBuf frame) throws ProtocolException {
    int type = Frames.type(frame);
    int id = Frames.id(frame);
    ByteBuf in = frame.duplicate();
    in.skipBytes(Frames.HEADER_SIZE);
    String what = Frames.typeName(type);
    need(in, 1, what, "flags");
    int flags = in.readUnsignedByte();
    long ttl = 0;
    int code = 0;
    byte[] tracing = null;
    String service = null;
    Map<String, String> headers = Map.of();
    if (type == Frames.CALL_REQ) {
      need(in, 4 + Frames.TRACING_SIZE + 1, what, "ttl, tracing and service");
      ttl = in.readUnsignedInt();
      tracing = new byte[Frames.TRACING_SIZE];
      in.readBytes(tracing);
      int serviceLength = in.readUnsignedByte();
      need(in, serviceLength, what, "service");
      service = in.toString(in.readerIndex(), serviceLength, UTF_8);
      in.skipBytes(serviceLength);
      headers = TransportHeaders.read(in);
    } else if (type == Frames.CALL_RES) {
      need(in, 1 + Frames.TRACING_SIZE, what, "code and tracing");
      code = in.readUnsignedByte();
      tracing = new byte[Frames.TRACING_SIZE];
      in.readBytes(tracing);
      headers = TransportHeaders.read(in);
    } else if (type != Frames.CALL_REQ_CONTINUE && type != Frames.CALL_RES_CONTINUE) {
      throw new IllegalArgumentException("not a call frame: " + what);
    }
    need(in, 1, what, "checksum type");
    int checksumCode = in.readUnsignedByte();
    ChecksumType checksumType = ChecksumType.fromCode(checksumCode);
    if (checksumType == null) {
      throw ProtocolException.fatal("unknown checksum type " + checksumCode + " in " + what);
    }
    int checksum = 0;
    if (checksumType.size() > 0) {
      need(in, checksumType.size(), what, "checksum");
      checksum = in.readInt();
    }
    CallFrame f =
        new CallFrame(
            frame, type, id, flags, ttl, code, tracing, service, headers, checksumType, checksum);
    while (in.isReadable()) {
      if (in.readableBytes() < 2) {
        throw ProtocolException.fatal("frame too short: truncated arg chunk length in " + what);
      }
      int length = in.readUnsignedShort();
      if (in.readableBytes() < length) {
        throw ProtocolException.fatal(
            "frame too short: arg chunk of " + length + " bytes overruns the " + what + " frame");
      }
      if (f.chunkCount == MAX_CHUNKS) {
        throw ProtocolException.badRequest("more than three arg chunks in one " + what + " frame");
      }
      f.setChunk(f.chunkCount, in.readerIndex(), length);
      f.chunkCount++;
      in.skipBytes(length);
    }
    return f;
  }

  private static void need(ByteBuf in, int bytes, String what, String field)
      throws ProtocolException {
    if (in.readableBytes() < bytes) {
      throw ProtocolException.fatal(
          "frame too short: " + what + " frame truncated in its " + field);
    }
  }

  private void setChunk(int i, int index, int length) {
    switch (i) {
      case 0:
        index0 = index;
        length0 = length;
        break;
      case 1:
        index1 = index;
        length1 = length;
        break;
      default:
        index2 = index;
        length2 = length;
    }
  }

  /** The frame type. */
  public int type() {
    return type;
  }

  /** The message id. */
  public int id() {
    return id;
  }

  /** The flags byte. */
  public int flags() {
    return flags;
  }

  /** Whether more frames of this message follow. */
  public boolean moreFragments() {
    return (flags & Frames.FLAG_MORE_FRAGMENTS) != 0;
  }

  /** call req: the ttl in milliseconds. */
  public long ttl() {
    return ttl;
  }

  /** call res: the response code (0 OK, anything else an application error). */
  public int code() {
    return code;
  }

  /** call req and res: the 25 tracing bytes; null for continuations. */
  public byte[] tracing() {
    return tracing;
  }

  /** call req: the service. */
  public String service() {
    return service;
  }

  /** call req and res: the transport headers; empty for continuations. */
  public Map<String, String> headers() {
    return headers;
  }

  /** The checksum type. */
  public ChecksumType checksumType() {
    return checksumType;
  }

  /** The checksum value (0 for none). */
  public int checksum() {
    return checksum;
  }

  /** How many arg chunks the frame carries. */
  public int chunkCount() {
    return chunkCount;
  }

  /** The length of chunk {@code i}. */
  public int chunkLength(int i) {
    switch (i) {
      case 0:
        return length0;
      case 1:
        return length1;
      case 2:
        return length2;
      default:
        throw new IndexOutOfBoundsException("chunk " + i + " of " + chunkCount);
    }
  }

  /** The index in the frame buffer of chunk {@code i}'s first byte. */
  public int chunkIndex(int i) {
    switch (i) {
      case 0:
        return index0;
      case 1:
        return index1;
      case 2:
        return index2;
      default:
        throw new IndexOutOfBoundsException("chunk " + i + " of " + chunkCount);
    }
  }

  /** The frame buffer (not owned). */
  public ByteBuf frame() {
    return frame;
  }

  /**
   * A retained view of chunk {@code i} (a slice, or when the frame spans reads a view of the reads under
   * the chunk, see {@link FramePieces#retainedRange}); the caller releases it.
   */
  public ByteBuf retainedChunk(int i) {
    return FramePieces.retainedRange(frame, chunkIndex(i), chunkLength(i));
  }
}
