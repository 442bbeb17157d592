package io.yarpc.internal;

import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.List;

/** An input stream over a sequence of byte buffers; reads advance the buffers' positions. */
public final class ByteBuffersInputStream extends InputStream {
  private final List<ByteBuffer> buffers;
  private int index;

  /** Reads {@code buffers} (their remaining bytes, in order); the list is not copied. */
  public ByteBuffersInputStream(List<ByteBuffer> buffers) {
    this.buffers = buffers;
  }

  private ByteBuffer current() {
    while (index < buffers.size()) {
      ByteBuffer b = buffers.get(index);
      if (b.hasRemaining()) {
        return b;
      }
      index++;
    }
    return null;
  }

  @Override
  public int read() {
    ByteBuffer b = current();
    return b == null ? -1 : b.get() & 0xff;
  }

  @Override
  public int read(byte[] dst, int off, int len) {
    if (len == 0) {
      return 0;
    }
    ByteBuffer b = current();
    if (b == null) {
      return -1;
    }
    int n = Math.min(len, b.remaining());
    b.get(dst, off, n);
    return n;
  }

  @Override
  public int available() {
    long total = 0;
    for (int i = index; i < buffers.size(); i++) {
      total += buffers.get(i).remaining();
    }
    return (int) Math.min(total, Integer.MAX_VALUE);
  }

  @Override
  public long skip(long n) {
    long skipped = 0;
    ByteBuffer b;
    while (skipped < n && (b = current()) != null) {
      int step = (int) Math.min(n - skipped, b.remaining());
      b.position(b.position() + step);
      skipped += step;
    }
    return skipped;
  }
}
