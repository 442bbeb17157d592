package io.yarpc.benchmarks.jmh;

import io.yarpc.transport.Body;
import java.io.ByteArrayInputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The same bytes as each kind of {@link Body} a decoder meets:
 *
 * <ul>
 *   <li>{@code heap}: {@code Body.of(byte[])} — one heap view (HTTP and TChannel receive into heap
 *       buffers; a small TChannel arg3 is one frame);
 *   <li>{@code direct}: {@code Body.of(directBuffer)} — one read-only direct view (a transport reading
 *       into direct memory);
 *   <li>{@code multi}: {@code Body.ofBuffers(...)} over direct pieces of at most 16 KiB, at least two —
 *       a message spread over several network buffers, as gRPC receives it;
 *   <li>{@code stream}: {@code Body.of(InputStream, length)} — no byte access at all.
 * </ul>
 *
 * Bodies are created per operation (a few dozen bytes) because a stream body can be read once.
 */
final class Bodies {
  static final int PIECE = 16 * 1024;

  private final String kind;
  private final byte[] bytes;
  private final ByteBuffer direct;
  private final List<ByteBuffer> pieces;

  Bodies(String kind, byte[] bytes) {
    this.kind = kind;
    this.bytes = bytes;
    this.direct = ByteBuffer.allocateDirect(bytes.length).put(bytes).flip();
    List<ByteBuffer> p = new ArrayList<>();
    int pieceSize = Math.max(1, Math.min(PIECE, (bytes.length + 1) / 2));
    for (int off = 0; off < bytes.length; off += pieceSize) {
      int n = Math.min(pieceSize, bytes.length - off);
      p.add(ByteBuffer.allocateDirect(n).put(bytes, off, n).flip());
    }
    this.pieces = List.copyOf(p);
    if (!List.of("heap", "direct", "multi", "stream").contains(kind)) {
      throw new IllegalArgumentException("unknown body kind " + kind);
    }
  }

  /** A new body of this kind over the bytes. */
  Body newBody() {
    switch (kind) {
      case "heap":
        return Body.of(bytes);
      case "direct":
        return Body.of(direct);
      case "multi":
        return Body.ofBuffers(pieces, null);
      default:
        return Body.of(new ByteArrayInputStream(bytes), bytes.length);
    }
  }

  /** The bytes. */
  byte[] bytes() {
    return bytes;
  }
}
