package io.yarpc.encoding.protobuf.internal;

import io.yarpc.transport.Body;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A pooled array that messages parsed with aliasing point into, given back to its pool once every holder
 * let go: the call that decoded it, and each response body that may serialise a message pointing into it
 * (a handler may echo a request's {@code bytes} field, and a lazy response body serialises only when the
 * transport writes it, possibly after the call ended).
 */
final class Lease {
  private final ArrayPool pool;
  private final byte[] array;
  private final AtomicInteger holders = new AtomicInteger(1);

  /** A lease held once, by its creator. */
  public Lease(ArrayPool pool, byte[] array) {
    this.pool = pool;
    this.array = array;
  }

  /** Adds a holder. */
  public void retain() {
    holders.incrementAndGet();
  }

  /** Drops a holder; the last one gives the array back. */
  public void release() {
    int left = holders.decrementAndGet();
    if (left == 0) {
      pool.giveBack(array);
    } else if (left < 0) {
      holders.incrementAndGet();
      throw new IllegalStateException("lease released more often than held");
    }
  }

  /** {@code body} holding this lease until released: the lease is retained now and released with it. */
  public Body hold(Body body) {
    retain();
    return new Held(body, this);
  }

  /** A body that behaves as its delegate and drops a lease holder when released. */
  private static final class Held extends Body {
    private final Body delegate;
    private final Lease lease;

    Held(Body delegate, Lease lease) {
      this.delegate = delegate;
      this.lease = lease;
    }

    @Override
    public long length() {
      return delegate.length();
    }

    @Override
    public boolean hasByteAccess() {
      return delegate.hasByteAccess();
    }

    @Override
    public List<ByteBuffer> byteBuffers() {
      checkNotReleased();
      return delegate.byteBuffers();
    }

    @Override
    public ByteBuffer arrayView() {
      checkNotReleased();
      return delegate.arrayView();
    }

    @Override
    public void copyTo(byte[] destination, int offset) throws IOException {
      checkNotReleased();
      delegate.copyTo(destination, offset);
    }

    @Override
    public InputStream openStream() {
      checkNotReleased();
      return delegate.openStream();
    }

    @Override
    public void writeTo(OutputStream out) throws IOException {
      checkNotReleased();
      delegate.writeTo(out);
    }

    @Override
    protected void deallocate() {
      try {
        delegate.release();
      } finally {
        lease.release();
      }
    }
  }
}
