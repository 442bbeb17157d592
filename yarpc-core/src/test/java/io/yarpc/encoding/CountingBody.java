package io.yarpc.encoding;

import io.yarpc.transport.Body;
import java.io.ByteArrayInputStream;
import java.io.FilterInputStream;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Test-only body that counts how it is read: {@link #byteBuffers()} calls, {@link #openStream()} calls
 * and reads on the streams it opened. With byte access it can split its bytes over several views, heap or
 * direct; without, it is a plain stream body.
 */
public final class CountingBody extends Body {
  public final AtomicInteger byteBuffersCalls = new AtomicInteger();
  public final AtomicInteger openStreamCalls = new AtomicInteger();
  public final AtomicInteger streamReads = new AtomicInteger();

  private final byte[] bytes;
  private final boolean byteAccess;
  private final int pieces;
  private final boolean direct;
  private final boolean knownLength;

  private CountingBody(
      byte[] bytes, boolean byteAccess, int pieces, boolean direct, boolean knownLength) {
    this.bytes = bytes;
    this.byteAccess = byteAccess;
    this.pieces = pieces;
    this.direct = direct;
    this.knownLength = knownLength;
  }

  /** A body with byte access: one read-only heap view. */
  public static CountingBody withByteAccess(byte[] bytes) {
    return new CountingBody(bytes, true, 1, false, true);
  }

  /** A body with byte access split over {@code pieces} read-only views, direct or heap. */
  public static CountingBody withByteAccess(byte[] bytes, int pieces, boolean direct) {
    return new CountingBody(bytes, true, pieces, direct, true);
  }

  /** A body without byte access, of known length. */
  public static CountingBody streamOnly(byte[] bytes) {
    return new CountingBody(bytes, false, 1, false, true);
  }

  /** A body without byte access whose length is not known up front. */
  public static CountingBody streamOnlyUnknownLength(byte[] bytes) {
    return new CountingBody(bytes, false, 1, false, false);
  }

  @Override
  public long length() {
    return knownLength ? bytes.length : -1;
  }

  @Override
  public boolean hasByteAccess() {
    return byteAccess;
  }

  @Override
  public List<ByteBuffer> byteBuffers() {
    if (!byteAccess) {
      return super.byteBuffers();
    }
    checkNotReleased();
    byteBuffersCalls.incrementAndGet();
    List<ByteBuffer> views = new ArrayList<>(pieces);
    int step = (bytes.length + pieces - 1) / Math.max(pieces, 1);
    for (int off = 0, i = 0; i < pieces; i++, off += step) {
      int from = Math.min(off, bytes.length);
      int to = Math.min(off + step, bytes.length);
      ByteBuffer b;
      if (direct) {
        b = ByteBuffer.allocateDirect(to - from);
        b.put(bytes, from, to - from).flip();
      } else {
        b = ByteBuffer.wrap(bytes, from, to - from).slice();
      }
      views.add(b.asReadOnlyBuffer());
    }
    return views;
  }

  @Override
  public InputStream openStream() {
    checkNotReleased();
    openStreamCalls.incrementAndGet();
    return new FilterInputStream(new ByteArrayInputStream(bytes)) {
      @Override
      public int read() throws java.io.IOException {
        streamReads.incrementAndGet();
        return super.read();
      }

      @Override
      public int read(byte[] b, int off, int len) throws java.io.IOException {
        streamReads.incrementAndGet();
        return super.read(b, off, len);
      }
    };
  }
}
