package io.yarpc.transport.tchannel.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.tchannel.ChecksumType;
import java.util.ArrayList;
import java.util.List;

/**
 * Splits one call message (call req or call res) into frames by the writer rules of
 * docs/spec/wire-tchannel.md §6.3, the way tchannel-go does:
 *
 * <ol>
 *   <li>all three args are always written, an empty one as a zero-length chunk;
 *   <li>an arg is split only where a frame is full: the frame is filled to the limit, flagged
 *       more-fragments, and the next continuation frame's first chunk continues the arg;
 *   <li>when a non-final arg ends with two bytes or less left in the frame, the frame is sent with the
 *       more-fragments flag and the next continuation frame starts with a zero-length chunk that closes the
 *       arg, followed by the next arg's chunk;
 *   <li>arg1 is entirely in the first frame, together with at least arg2's chunk header (otherwise the
 *       call is refused with {@code invalid-argument});
 *   <li>the checksum type is the same in every frame, and each frame's checksum is the running value
 *       after that frame's chunks;
 *   <li>every frame but the last has the more-fragments flag; the streaming flag is never set.
 * </ol>
 *
 * <p>Buffers: arg1, arg2 and chunks of arg3 up to {@value #COPY_THRESHOLD} bytes are copied into the
 * frame's own pooled buffer; longer arg3 chunks are added to the frame as retained slices of the arg3
 * buffer (a {@link CompositeByteBuf} of the frame's header part and the slice), so a body with byte
 * access reaches the socket without an intermediate copy. Exactly the frames that refer to arg3 are
 * composite buffers: a message without one holds a copy of its body. The writer never changes the args' indices and
 * never releases them; the returned frames hold their own references, and the caller writes (or
 * releases) every one of them.
 */
final class MessageWriter {
  /** arg3 chunks up to this size are copied into the frame buffer instead of referenced. */
  static final int COPY_THRESHOLD = 1024;

  private MessageWriter() {}

  /**
   * One chunk of a planned frame: {@code length} bytes of arg {@code arg} (0 for arg1) from index {@code
   * index} of that arg's buffer.
   */
  record Chunk(int arg, int index, int length) {}

  /**
   * The frames of a message.
   *
   * @param alloc allocator for the frames' own buffers
   * @param firstType {@link Frames#CALL_REQ} or {@link Frames#CALL_RES}
   * @param id the message id
   * @param fields the first frame's payload between the flags byte and the checksum type (call req:
   *     {@code ttl tracing service headers}; call res: {@code code tracing headers})
   * @param checksumType the checksum to write ({@link ChecksumType#FARMHASH} is written as none)
   * @param arg1 arg1's readable bytes
   * @param arg2 arg2's readable bytes
   * @param arg3 arg3's readable bytes
   * @param maxFrameSize the largest frame to write (65535 on the wire; smaller in tests)
   * @throws YarpcException {@code invalid-argument} when arg1 and the fields do not fit in the first frame
   *     with room for arg2's chunk header
   */
  public static List<ByteBuf> write(
      ByteBufAllocator alloc,
      int firstType,
      int id,
      byte[] fields,
      ChecksumType checksumType,
      ByteBuf arg1,
      ByteBuf arg2,
      ByteBuf arg3,
      int maxFrameSize) {
    if (checksumType == ChecksumType.FARMHASH) {
      checksumType = ChecksumType.NONE;
    }
    checkFirstFrame(fields.length, checksumType, arg1.readableBytes(), maxFrameSize);
    int checksumSize = checksumType.size();
    int firstOverhead = Frames.HEADER_SIZE + 1 + fields.length + 1 + checksumSize;
    int continueOverhead = Frames.HEADER_SIZE + 1 + 1 + checksumSize;

    ByteBuf[] args = {arg1, arg2, arg3};
    List<List<Chunk>> plan = new ArrayList<>();
    List<Chunk> frame = new ArrayList<>(3);
    int remaining = maxFrameSize - firstOverhead;
    for (int a = 0; a < 3; a++) {
      int index = args[a].readerIndex();
      int left = args[a].readableBytes();
      while (true) {
        int n = Math.min(left, remaining - 2);
        frame.add(new Chunk(a, index, n));
        remaining -= 2 + n;
        index += n;
        left -= n;
        if (left == 0) {
          break;
        }
        plan.add(frame); // full: the arg continues in the next frame
        frame = new ArrayList<>(3);
        remaining = maxFrameSize - continueOverhead;
      }
      if (a < 2 && remaining <= 2) {
        plan.add(frame); // no room to start the next arg: close this one with an empty chunk
        frame = new ArrayList<>(3);
        remaining = maxFrameSize - continueOverhead;
        frame.add(new Chunk(a, index, 0));
        remaining -= 2;
      }
    }
    plan.add(frame);
    return writePlanned(alloc, firstType, id, fields, checksumType, args, plan);
  }

  /**
   * Checks that the first frame can hold the fields and arg1 with room for arg2's chunk header (rule 4).
   *
   * @throws YarpcException {@code invalid-argument} when it cannot
   */
  static void checkFirstFrame(
      int fieldsLength, ChecksumType checksumType, int arg1Length, int maxFrameSize) {
    int checksumSize = checksumType == ChecksumType.FARMHASH ? 0 : checksumType.size();
    int firstOverhead = Frames.HEADER_SIZE + 1 + fieldsLength + 1 + checksumSize;
    if (maxFrameSize - firstOverhead - 2 - arg1Length <= 2) {
      throw YarpcException.of(
          Code.INVALID_ARGUMENT,
          "the procedure name (%d bytes) and the tchannel " + "headers do not fit in one frame",
          arg1Length);
    }
  }

  /**
   * The frames of a message split as {@code plan} says (one list of chunks per frame); {@link #write}
   * plans by the rules, tests may split by hand. Frames after the first are continuations; all but the
   * last carry the more-fragments flag.
   */
  static List<ByteBuf> writePlanned(
      ByteBufAllocator alloc,
      int firstType,
      int id,
      byte[] fields,
      ChecksumType checksumType,
      ByteBuf[] args,
      List<List<Chunk>> plan) {
    int continueType =
        firstType == Frames.CALL_REQ ? Frames.CALL_REQ_CONTINUE : Frames.CALL_RES_CONTINUE;
    RunningChecksum checksum = new RunningChecksum(checksumType);
    List<ByteBuf> out = new ArrayList<>(plan.size());
    try {
      for (int f = 0; f < plan.size(); f++) {
        boolean first = f == 0;
        boolean more = f < plan.size() - 1;
        out.add(
            buildFrame(
                alloc,
                first ? firstType : continueType,
                id,
                more,
                first ? fields : null,
                checksum,
                plan.get(f),
                args));
      }
    } catch (RuntimeException | Error e) {
      for (ByteBuf b : out) {
        b.release();
      }
      throw e;
    }
    return out;
  }

  private static ByteBuf buildFrame(
      ByteBufAllocator alloc,
      int type,
      int id,
      boolean more,
      byte[] fields,
      RunningChecksum checksum,
      List<Chunk> chunks,
      ByteBuf[] args) {
    int overhead =
        Frames.HEADER_SIZE + 1 + (fields == null ? 0 : fields.length) + 1 + checksum.type().size();
    int size = overhead;
    int copied = overhead;
    for (Chunk c : chunks) {
      size += 2 + c.length();
      copied += 2 + (copy(c) ? c.length() : 0);
    }
    ByteBuf head = alloc.directBuffer(copied);
    CompositeByteBuf composite = null;
    ByteBuf current = head;
    try {
      Frames.writeHeader(head, size, type, id);
      head.writeByte(more ? Frames.FLAG_MORE_FRAGMENTS : 0);
      if (fields != null) {
        head.writeBytes(fields);
      }
      head.writeByte(checksum.type().code());
      int checksumIndex = head.writerIndex();
      if (checksum.type().size() > 0) {
        head.writeInt(0);
      }
      for (Chunk c : chunks) {
        ByteBuf src = args[c.arg()];
        if (current == null) {
          current = alloc.directBuffer(2 + c.length());
        }
        current.writeShort(c.length());
        checksum.update(src, c.index(), c.length());
        if (copy(c)) {
          current.writeBytes(src, c.index(), c.length());
        } else {
          if (composite == null) {
            composite = alloc.compositeBuffer(4);
          }
          composite.addComponent(true, current);
          current = null;
          composite.addComponent(true, src.retainedSlice(c.index(), c.length()));
        }
      }
      if (checksum.type().size() > 0) {
        head.setInt(checksumIndex, checksum.value());
      }
      if (composite == null) {
        return head;
      }
      if (current != null) {
        composite.addComponent(true, current);
        current = null;
      }
      return composite;
    } catch (RuntimeException | Error e) {
      if (composite != null) {
        composite.release();
      }
      if (current != null) {
        current.release();
      }
      throw e;
    }
  }

  private static boolean copy(Chunk c) {
    return c.arg() < 2 || c.length() <= COPY_THRESHOLD;
  }
}
