package io.yarpc.transport.tchannel.internal;

import io.netty.buffer.ByteBuf;
import io.yarpc.transport.Body;
import io.yarpc.transport.tchannel.ChecksumType;
import java.util.ArrayList;
import java.util.List;

/**
 * Reassembles the three args of one call message from its frames, the reader algorithm of
 * docs/spec/wire-tchannel.md §6.2: in each frame every chunk after the first starts the next arg; the last chunk
 * of a frame with the more-fragments flag stays open and the next frame's first chunk continues it (a
 * zero-length first chunk just closes it); the last frame closes everything.
 *
 * <p>Chunks are kept as retained views of the buffers the socket read them into, not copied (except small
 * chunks of messages that span frames, below): a slice of one read, or of each read under a chunk whose
 * frame spans reads ({@link FramePieces}). arg3 leaves as a {@link Body} with byte access over those
 * reads' arrays ({@link #takeBody()}); the body releases the chunks exactly once. Whatever has not been
 * taken is released by {@link #release()}.
 *
 * <p>Checks, each a {@link ProtocolException} that ends the message (the connection stays): bad request
 * for arg1 not entirely in the first frame (docs/spec/wire-tchannel.md §6.3 rule 4) or longer than 16 KiB
 * (requests), more than three args, a last frame before arg3, a checksum type that changes between
 * frames, a CRC-32 or CRC-32C checksum that does not match (verified frame by frame; farmhash is not
 * verified), and an arg2 longer than {@code maxArg2Bytes} (checked on the raw bytes as they arrive, before
 * anything decodes them); {@linkplain ProtocolException#tooLarge too large} for more than {@code maxBytes}
 * bytes of args.
 *
 * <p>When given a {@link PendingBytes}, the assembler reports the chunks of a message that spans frames to
 * it (a message complete in its first frame is handed on at once and never counted), and every such chunk
 * that leaves (taken as the body or released). Such a message keeps a chunk that is small next to the
 * socket buffer it was read into as a copy instead of a slice, so that a peer sending small fragments
 * slowly cannot make the connection hold much more memory than it sent (see {@link PendingBytes}).
 *
 * <p>Not thread-safe: used on the connection's event loop.
 */
public final class MessageAssembler {
  private final boolean request;
  private final long maxBytes;
  private final long maxArg2Bytes;
  private final PendingBytes pending;
  private boolean tracked; // whether the chunks held are counted in pending
  private final ChecksumType checksumType;
  private final RunningChecksum checksum;

  @SuppressWarnings("unchecked")
  private final List<ByteBuf>[] args =
      new List[] {new ArrayList<>(1), new ArrayList<>(1), new ArrayList<>(1)};

  private int current;
  private long total;
  private long arg2Bytes;
  private boolean complete;
  private int frames;

  /** The arg bytes received so far. */
  long size() {
    return total;
  }

  /**
   * An assembler for a message whose first frame has checksum type {@code checksumType}.
   *
   * @param request whether the message is a call req (arg1 length is checked) rather than a call res
   * @param maxBytes the most arg bytes the message may carry
   */
  public MessageAssembler(boolean request, ChecksumType checksumType, long maxBytes) {
    this(request, checksumType, maxBytes, Long.MAX_VALUE, null);
  }

  /**
   * An assembler for a message whose first frame has checksum type {@code checksumType}.
   *
   * @param request whether the message is a call req (arg1 length is checked) rather than a call res
   * @param maxBytes the most arg bytes the message may carry
   * @param maxArg2Bytes the most bytes arg2 may carry
   * @param pending where the chunks held are counted, or null
   */
  MessageAssembler(
      boolean request,
      ChecksumType checksumType,
      long maxBytes,
      long maxArg2Bytes,
      PendingBytes pending) {
    this.request = request;
    this.checksumType = checksumType;
    this.checksum = new RunningChecksum(checksumType);
    this.maxBytes = maxBytes;
    this.maxArg2Bytes = maxArg2Bytes;
    this.pending = pending;
  }

  /** The checksum type of the message. */
  public ChecksumType checksumType() {
    return checksumType;
  }

  /**
   * Adds the next frame of the message (the first call is the call req or res, later ones continuations).
   * Retains views of its chunks; the caller keeps ownership of the frame.
   *
   * @return whether the message is complete
   * @throws ProtocolException a bad request when the frame breaks a rule (see the class comment); the
   *     caller then {@link #release() releases} the assembler
   */
  public boolean add(CallFrame f) throws ProtocolException {
    if (complete) {
      throw ProtocolException.badRequest(
          "frame after the last frame of message " + Frames.idString(f.id()));
    }
    boolean first = frames++ == 0;
    if (first && f.moreFragments() && pending != null) {
      tracked = true; // the message spans frames: what it holds counts until it is handed on
    }
    int count = f.chunkCount();
    if (first) {
      if (f.moreFragments() && count < 2) {
        throw ProtocolException.badRequest("arg1 must not be fragmented");
      }
      if (request && count > 0 && f.chunkLength(0) > Frames.MAX_ARG1_SIZE) {
        throw ProtocolException.badRequest(
            "arg1 is " + f.chunkLength(0) + " bytes long, longer than " + Frames.MAX_ARG1_SIZE);
      }
    } else if (f.checksumType() != checksumType) {
      throw ProtocolException.badRequest(
          "checksum type changed from "
              + checksumType.code()
              + " to "
              + f.checksumType().code()
              + " within message "
              + Frames.idString(f.id()));
    }
    for (int i = 0; i < count; i++) {
      if (i > 0) {
        current++;
      }
      if (current > 2) {
        throw ProtocolException.badRequest(
            "message " + Frames.idString(f.id()) + " has more than three args");
      }
      int length = f.chunkLength(i);
      total += length;
      if (total > maxBytes) {
        throw ProtocolException.tooLarge(
            "message " + Frames.idString(f.id()) + " exceeds the limit of " + maxBytes + " bytes");
      }
      if (current == 1) {
        arg2Bytes += length;
        if (arg2Bytes > maxArg2Bytes) {
          throw ProtocolException.badRequest(
              "the headers (arg2) of message "
                  + Frames.idString(f.id())
                  + " exceed the limit of "
                  + maxArg2Bytes
                  + " bytes");
        }
      }
      if (length > 0) {
        checksum.update(f.frame(), f.chunkIndex(i), length);
        ByteBuf chunk;
        if (tracked && PendingBytes.wouldPinMuchMore(f.frame(), f.chunkIndex(i), length)) {
          ByteBuf frame = f.frame();
          chunk = // a copy pins only what it holds; of the same kind (heap or direct) as the frame
              frame.isDirect()
                  ? frame.alloc().directBuffer(length)
                  : frame.alloc().heapBuffer(length);
          chunk.writeBytes(frame, f.chunkIndex(i), length);
        } else {
          chunk = f.retainedChunk(i);
        }
        args[current].add(chunk);
        if (tracked) {
          pending.add(chunk);
        }
      }
    }
    if (checksum.isVerifiable() && checksum.value() != f.checksum()) {
      throw ProtocolException.badRequest(
          "invalid checksum (type "
              + checksumType.code()
              + ") expected: "
              + Integer.toUnsignedString(f.checksum())
              + " actual: "
              + Integer.toUnsignedString(checksum.value()));
    }
    if (!f.moreFragments()) {
      if (current < 2) {
        throw ProtocolException.badRequest(
            "message "
                + Frames.idString(f.id())
                + " ended after "
                + (first && count == 0 ? 0 : current + 1)
                + " of its 3 args");
      }
      complete = true;
    }
    return complete;
  }

  /** The bytes of arg {@code index} (0 for arg1), copied: for the small args (procedure, headers). */
  public byte[] argBytes(int index) {
    List<ByteBuf> chunks = args[index];
    int length = 0;
    for (ByteBuf b : chunks) {
      length += b.readableBytes();
    }
    byte[] out = new byte[length];
    int pos = 0;
    for (ByteBuf b : chunks) {
      int n = b.readableBytes();
      b.getBytes(b.readerIndex(), out, pos, n);
      pos += n;
    }
    return out;
  }

  /**
   * arg3 as a body with byte access over the received buffers (no copy); the body owns them from now on
   * and releases them once. Call at most once, after the message is complete.
   */
  public Body takeBody() {
    List<ByteBuf> chunks = args[2];
    Body body;
    if (chunks.isEmpty()) {
      body = Body.empty();
    } else if (chunks.size() == 1) {
      ByteBuf only = chunks.get(0);
      body = Body.ofBuffers(FramePieces.views(chunks), only::release);
    } else {
      ByteBuf[] held = chunks.toArray(new ByteBuf[0]);
      body =
          Body.ofBuffers(
              FramePieces.views(chunks),
              () -> {
                for (ByteBuf b : held) {
                  b.release();
                }
              });
    }
    if (tracked) { // only now: until the body exists, release() still owns (and uncounts) them
      for (ByteBuf b : chunks) {
        pending.remove(b);
      }
    }
    chunks.clear();
    return body;
  }

  /** Releases every chunk not taken yet; idempotent. */
  public void release() {
    for (int i = 0; i < args.length; i++) {
      for (ByteBuf b : args[i]) {
        if (tracked) {
          pending.remove(b); // before the release: a released slice may be recycled
        }
        b.release();
      }
      args[i].clear();
    }
  }
}
