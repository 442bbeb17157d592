package io.yarpc.retry.internal;

import io.yarpc.transport.Body;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A request body that several attempts of one call send in turn: each attempt gets a {@linkplain #view()
 * view} of its own, which its outbound owns and releases as it would any request body; the body itself is
 * released once, when the owner has {@linkplain #release() released} its share and every view has been
 * released — never while an outbound may still be writing a view.
 *
 * <p>A body that is not {@linkplain Body#isRepeatable() repeatable} (read from a stream) is read into
 * memory first. Thread-safe.
 */
public final class SharedBody {
  private final Body body;
  private final AtomicInteger shares = new AtomicInteger(1); // the owner's

  private SharedBody(Body body) {
    this.body = body;
  }

  /**
   * Shares {@code body}, which the new object owns from now on (released here if reading it fails).
   *
   * @throws java.io.UncheckedIOException when a body read from a stream cannot be read
   */
  public static SharedBody of(Body body) {
    if (body.isRepeatable()) {
      return new SharedBody(body);
    }
    try {
      return new SharedBody(Body.of(body.toByteArray()));
    } finally {
      body.release();
    }
  }

  /** A view for one attempt, or null when the body was already released (the call ended). */
  public Body view() {
    int n;
    do {
      n = shares.get();
      if (n == 0) {
        return null;
      }
    } while (!shares.compareAndSet(n, n + 1));
    return new View();
  }

  /** Gives up the owner's share; the body is released once no view is left. Call once. */
  public void release() {
    if (shares.decrementAndGet() == 0) {
      body.release();
    }
  }

  /** The bytes of the shared body, read through; releasing a view gives up its share. */
  private final class View extends Body {
    @Override
    public long length() {
      return body.length();
    }

    @Override
    public boolean hasByteAccess() {
      return body.hasByteAccess();
    }

    @Override
    public boolean isRepeatable() {
      return true;
    }

    @Override
    public List<ByteBuffer> byteBuffers() {
      checkNotReleased();
      return body.byteBuffers();
    }

    @Override
    public ByteBuffer arrayView() {
      checkNotReleased();
      return body.arrayView();
    }

    @Override
    public void copyTo(byte[] destination, int offset) throws IOException {
      checkNotReleased();
      body.copyTo(destination, offset);
    }

    @Override
    public InputStream openStream() {
      checkNotReleased();
      return body.openStream();
    }

    @Override
    public void writeTo(OutputStream out) throws IOException {
      checkNotReleased();
      body.writeTo(out);
    }

    @Override
    public byte[] toByteArray() {
      checkNotReleased();
      return body.toByteArray();
    }

    @Override
    protected void deallocate() {
      SharedBody.this.release();
    }
  }
}
