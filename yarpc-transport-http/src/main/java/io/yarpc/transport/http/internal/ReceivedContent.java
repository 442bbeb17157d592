package io.yarpc.transport.http.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledHeapByteBuf;
import io.netty.channel.PreferHeapByteBufAllocator;
import io.netty.handler.codec.http.HttpContent;
import io.yarpc.transport.Body;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;

/**
 * A received message's content, gathered chunk by chunk, on the server (requests) and the client
 * (responses) alike. Owned by the handler receiving the message until {@link #take}; {@link #release}
 * gives back whatever it still holds.
 *
 * <p>On HTTP/1.1 the chunks' own buffers are kept (no copy): a connection carries one message at a time, so
 * no other message shares them. On HTTP/2 each DATA frame is a slice of the connection's read buffer, which
 * the frames of other streams share. Keeping the slice would pin that buffer until every stream with a frame
 * in it has finished (more than the pending-byte budget counts: a padded or tiny frame pins a whole read),
 * and a cumulation with slices out is shared, so the frame decoder can neither discard its consumed bytes
 * nor append to it in place: it copies or wraps it on every read (with Netty's merge cumulation, measured
 * with 64 streams of 1 MiB: about 0.6 MB of new pool chunks per request; {@link io.yarpc.netty.internal.FrameCumulator} relies on
 * frames being copied out too). So on HTTP/2 each
 * frame is copied into the stream's own pieces of at most {@value #PIECE} bytes (one default-sized DATA
 * frame; heap or direct as the transport receives) and released at once. A message of up to {@value #PIECE}
 * bytes with a {@code content-length} fits in one piece, which parsers read in place; larger ones are copied
 * once more by parsers that need contiguous bytes, as for any multi-buffer body. Pieces are small so that the
 * pool reuses them: measured with 64 streams of 1 MiB, one buffer per message (a quarter of a pool chunk)
 * made the pool free and allocate chunks as messages came and went, 0.6 MB of heap per request; 64 KiB pieces
 * 0.25 MB; 16 KiB pieces 0.16 MB.
 *
 * <p><b>Whole messages.</b> An HTTP/2 message larger than a piece whose {@code content-length} is known
 * (up to {@value #WHOLE_MAX} bytes), when the caller allows it ({@code whole}; the server reserves the
 * whole length in its pending-byte budget at the first byte, or calls {@link #piecesOnly()} when that is
 * refused; the client keeps its own cap) and the connection receives into heap (its allocator prefers
 * heap, as {@code HttpTransport.Builder#receiveIntoHeap} makes it by default), is copied instead into one
 * heap array of exactly that length, allocated for this message alone at its first byte and never pooled.
 * Its body is {@linkplain Body#ofImmutable immutable}: a parser reads it in place and may keep references
 * into it (protobuf's aliasing), so each received byte is copied once, from the frame into that array,
 * where pieces cost a second copy into a parser's array and a third out of it into the message's fields.
 * The array is the message's heap cost (about what the parser's copy of the fields would have been) and
 * counts in {@link #footprint()} from its allocation. Bytes past the declared length (which Netty's HTTP/2
 * decoder rejects) would go into pieces after it.
 */
final class ReceivedContent {
  /** The largest piece an HTTP/2 message is copied into. */
  static final int PIECE = 16 * 1024;

  /** The largest message received into one array of its declared length: 4 MiB. */
  static final int WHOLE_MAX = 4 << 20;

  private final ByteBufAllocator alloc;
  private final boolean copyChunks;
  private long wholeLength; // HTTP/2: the declared length, when received into one array; or 0
  private boolean whole; // HTTP/2: that array is still to be made, as the first piece
  private CompositeByteBuf received;
  private ByteBuf piece; // HTTP/2: the piece being filled, not yet in received
  private long remaining; // HTTP/2: bytes still expected from content-length, or -1

  /**
   * Content that keeps the chunks' buffers, or (when {@code copyChunks}) copies them into pieces sized
   * from {@code declaredLength} ({@code -1}: unknown), or into one array of that length when {@code
   * whole} is allowed and it is more than a piece and at most {@value #WHOLE_MAX} bytes.
   */
  ReceivedContent(ByteBufAllocator alloc, boolean copyChunks, long declaredLength, boolean whole) {
    this.alloc = alloc;
    this.copyChunks = copyChunks;
    this.remaining = declaredLength;
    // heap only: a transport that receives into direct memory (receiveIntoHeap false) keeps pieces
    this.whole =
        copyChunks
            && whole
            && wholeFits(declaredLength)
            && alloc instanceof PreferHeapByteBufAllocator;
    this.wholeLength = this.whole ? declaredLength : 0;
  }

  /** The length of the one array this message is received into ({@code whole}), or 0 (pieces). */
  long wholeLength() {
    return wholeLength;
  }

  /** Whether the next byte makes the one array of {@link #wholeLength()}: nothing is allocated yet. */
  boolean wholePending() {
    return whole; // cleared by the first allocation
  }

  /** Gives up the one array before it is made: the message goes into pieces of what arrives. */
  void piecesOnly() {
    if (whole) {
      whole = false;
      wholeLength = 0;
    }
  }

  /** Whether a message of {@code declaredLength} bytes would be received into one array. */
  static boolean wholeFits(long declaredLength) {
    return declaredLength > PIECE && declaredLength <= WHOLE_MAX;
  }

  /** The bytes received so far. */
  long size() {
    return (received == null ? 0 : received.readableBytes())
        + (piece == null ? 0 : piece.readableBytes());
  }

  /**
   * The bytes of memory this content holds for its message: what it received, plus the rest of a whole
   * message's array not yet filled.
   */
  long footprint() {
    return size() + (piece instanceof MessageArray ? piece.writableBytes() : 0);
  }

  /** Adds {@code chunk}'s bytes and takes over the chunk. */
  void append(HttpContent chunk) {
    ByteBuf data = chunk.content();
    if (!data.isReadable()) {
      chunk.release();
      return;
    }
    if (!copyChunks) {
      composite().addComponent(true, data); // the composite owns the chunk's buffer now
      return;
    }
    try {
      copy(data);
    } finally {
      chunk.release();
    }
  }

  /**
   * HTTP/2: copies {@code data}'s readable bytes into this content's pieces; {@code data} stays the
   * caller's (a DATA frame, which the frame decoder releases).
   */
  void copy(ByteBuf data) {
    int from = data.readerIndex();
    int left = data.readableBytes();
    while (left > 0) {
      if (piece == null || !piece.isWritable()) {
        addPiece();
        if (whole) {
          whole = false; // only the first piece: bytes past the declared length go into pieces
          piece = new MessageArray((int) remaining);
        } else {
          long expected = remaining >= 0 ? Math.max(remaining, left) : left;
          piece = alloc.buffer((int) Math.min(PIECE, expected));
        }
      }
      int n = Math.min(piece.writableBytes(), left);
      piece.writeBytes(data, from, n);
      from += n;
      left -= n;
      if (remaining >= n) {
        remaining -= n;
      }
    }
  }

  /** The content as one buffer, which the caller now owns; this holds nothing after. */
  ByteBuf take() {
    if (received == null) {
      ByteBuf only = piece != null ? piece : Unpooled.EMPTY_BUFFER;
      piece = null;
      return only;
    }
    addPiece();
    ByteBuf all = received;
    received = null;
    return all;
  }

  /** Releases what this still holds. */
  void release() {
    if (piece != null) {
      piece.release();
      piece = null;
    }
    if (received != null) {
      received.release();
      received = null;
    }
  }

  /**
   * A body with byte access over {@code buf} (as {@link ByteBuf#nioBuffers()}, no copy) that takes it over:
   * releasing the body releases {@code buf}, once. An empty {@code buf} (or null) is released at once and
   * gives an empty body.
   */
  static Body asBody(ByteBuf buf) {
    if (buf == null || !buf.isReadable()) {
      if (buf != null) {
        buf.release();
      }
      return Body.empty();
    }
    if (buf instanceof MessageArray) {
      Body body =
          Body.ofImmutable(buf.array(), buf.arrayOffset() + buf.readerIndex(), buf.readableBytes());
      buf.release(); // an unpooled array: releasing frees nothing, the body keeps the array
      return body;
    }
    List<ByteBuffer> views =
        buf.nioBufferCount() == 1
            ? List.of(buf.nioBuffer()) // the common case: one view, no array
            : Arrays.asList(buf.nioBuffers());
    return Body.ofBuffers(views, buf::release);
  }

  private void addPiece() {
    if (piece != null) {
      composite().addComponent(true, piece);
      piece = null;
    }
  }

  /** A whole message's array: unpooled heap, allocated for one message, never reused. */
  static final class MessageArray extends UnpooledHeapByteBuf {
    MessageArray(int length) {
      super(UnpooledByteBufAllocator.DEFAULT, new byte[length], length);
      setIndex(0, 0);
    }
  }

  private CompositeByteBuf composite() {
    if (received == null) {
      received = alloc.compositeBuffer(Integer.MAX_VALUE);
    }
    return received;
  }
}
