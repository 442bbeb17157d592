package io.yarpc.transport.grpc.internal;

import io.grpc.Detachable;
import io.grpc.Drainable;
import io.grpc.HasByteBuffer;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.yarpc.transport.Body;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The one {@link MethodDescriptor.Marshaller} of the transport, for requests and responses alike: it moves
 * {@link Body}s in and out of grpc-java without redundant copies.
 *
 * <h2>Receiving ({@link #parse})</h2>
 *
 * grpc-java hands over each received message as an {@link InputStream} that it closes right after
 * {@code parse} returns. When that stream is {@link KnownLength}, {@link HasByteBuffer} and
 * {@link Detachable} — grpc-netty's uncompressed messages are — the marshaller
 * {@linkplain Detachable#detach() detaches} the underlying buffers (so closing the original stream frees
 * nothing) and returns a body with byte access over them ({@link ReceivedBody}): {@link Body#copyTo}
 * reads them straight into the decoder's array, {@link Body#byteBuffers()} gives views of them.
 * Releasing the body closes the detached stream, which releases grpc-java's (pooled, direct) buffers —
 * exactly once, whoever releases the body and on whatever thread. Empty messages are released at once and
 * become {@link Body#empty()}. The only bytes copied on this path are pieces grpc-java had already merged
 * into a heap array itself, when views are asked for (see {@link ReceivedBody#collectViews}).
 *
 * <p>Any other stream (a compressed message, another transport) is read once into a heap array, which
 * becomes a byte-access body over that array.
 *
 * <h2>Sending ({@link #stream})</h2>
 *
 * The body is wrapped in a {@link Drainable} + {@link KnownLength} stream: grpc-java's framer learns the
 * length up front and lets the body {@linkplain Body#writeTo write itself} straight into its outgoing
 * buffers, with no intermediate array. The stream owns the body and releases it once drained or closed
 * (grpc-java closes every message stream after writing it). A body of unknown length is read into an
 * array first, since gRPC frames need the length before the bytes.
 */
public final class BodyMarshaller implements MethodDescriptor.Marshaller<Body> {
  private final ReceiveStats stats;

  /** A marshaller that counts what it receives in {@code stats}. */
  public BodyMarshaller(ReceiveStats stats) {
    this.stats = stats;
  }

  @Override
  public InputStream stream(Body body) {
    return new BodyInputStream(body);
  }

  @Override
  public Body parse(InputStream in) {
    try {
      if (in instanceof KnownLength
          && in instanceof Detachable
          && in instanceof HasByteBuffer
          && in.markSupported()) {
        return detach((Detachable) in);
      }
      byte[] bytes;
      if (in instanceof KnownLength) {
        int length = in.available();
        bytes = in.readNBytes(length);
        if (bytes.length != length || in.read() != -1) {
          throw Status.INTERNAL
              .withDescription("message length does not match its stream")
              .asRuntimeException();
        }
      } else {
        bytes = in.readAllBytes();
      }
      stats.onCopied(bytes.length);
      return bytes.length == 0 ? Body.empty() : Body.of(bytes);
    } catch (IOException e) {
      throw Status.INTERNAL
          .withDescription("failed to read message: " + e.getMessage())
          .withCause(e)
          .asRuntimeException();
    }
  }

  /** Takes over grpc-java's buffers of one message as a {@link ReceivedBody}. */
  private Body detach(Detachable source) throws IOException {
    InputStream detached = source.detach();
    boolean handedOver = false;
    try {
      int length = detached.available();
      if (length == 0) {
        return Body.empty();
      }
      detached.mark(length);
      Body body = new ReceivedBody(detached, length, stats);
      stats.onDetached();
      handedOver = true;
      return body;
    } finally {
      if (!handedOver) {
        detached.close();
      }
    }
  }

  private static final int MIN_COPY_CHUNK = 1024;
  private static final int MAX_COPY_CHUNK = 256 * 1024;

  /**
   * One received message in grpc-java's detached buffers, with byte access. The detached stream is
   * marked at the message's start and reset after every read, so it can be read any number of times.
   *
   * <ul>
   *   <li>{@link #copyTo} reads the stream straight into the caller's array: no view objects (the
   *       protobuf decoder's path; a 1 MiB message arrives in about 64 pieces).
   *   <li>{@link #byteBuffers()} collects a view of each piece on first use (see {@link #collectViews}).
   *   <li>Releasing closes the detached stream, which releases grpc-java's (pooled, direct) buffers:
   *       exactly once, whoever releases the body and on whatever thread.
   * </ul>
   */
  private static final class ReceivedBody extends Body {
    private final InputStream detached;
    private final int length;
    private final ReceiveStats stats;
    private Body views; // the pieces as views, once someone asked for them

    ReceivedBody(InputStream detached, int length, ReceiveStats stats) {
      this.detached = detached;
      this.length = length;
      this.stats = stats;
    }

    @Override
    public long length() {
      return length;
    }

    @Override
    public boolean hasByteAccess() {
      return true;
    }

    @Override
    public List<ByteBuffer> byteBuffers() {
      return views().byteBuffers();
    }

    @Override
    public void copyTo(byte[] destination, int offset) throws IOException {
      checkNotReleased();
      if (views != null) {
        views.copyTo(destination, offset);
        return;
      }
      Objects.checkFromIndexSize(offset, length, destination.length);
      try {
        int n = detached.readNBytes(destination, offset, length);
        if (n != length) {
          throw new IOException("message ended after " + n + " of " + length + " bytes");
        }
      } finally {
        detached.reset();
      }
    }

    @Override
    public InputStream openStream() {
      return views().openStream();
    }

    @Override
    protected void deallocate() {
      try {
        detached.close();
      } catch (IOException ignored) {
        // closing grpc-java's buffer stream does not throw
      }
      stats.onReleased();
    }

    private Body views() {
      checkNotReleased();
      if (views == null) {
        try {
          views = Body.ofBuffers(collectViews(), null);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
      return views;
    }

    /**
     * A view of each piece of grpc-java's memory.
     *
     * <p>grpc-java may have merged runs of tiny network reads into a heap array inside a message; such a
     * piece offers no {@link ByteBuffer} ({@link HasByteBuffer#byteBufferSupported()} is then false for
     * the stream as a whole, and {@code getByteBuffer} refuses while that piece is first). Only those
     * pieces are copied, in chunks that grow while the heap run goes on; every other piece stays a view
     * of grpc-java's memory. A message that offers no byte buffers at all thus ends up copied once.
     */
    private List<ByteBuffer> collectViews() throws IOException {
      HasByteBuffer buffers = (HasByteBuffer) detached;
      List<ByteBuffer> list = new ArrayList<>(2);
      int collected = 0;
      int copied = 0;
      int chunk = MIN_COPY_CHUNK;
      try {
        while (collected < length) {
          ByteBuffer view = nextView(buffers);
          int n;
          if (view != null && view.hasRemaining()) {
            n = Math.min(view.remaining(), length - collected);
            if (n < view.remaining()) {
              view.limit(view.position() + n);
            }
            long skipped = detached.skip(n);
            if (skipped != n) {
              throw new IOException("could not skip " + n + " bytes, skipped " + skipped);
            }
            chunk = MIN_COPY_CHUNK;
          } else {
            byte[] heap = detached.readNBytes(Math.min(chunk, length - collected));
            if (heap.length == 0) {
              throw new IOException(
                  "message ended after " + collected + " of " + length + " bytes");
            }
            view = ByteBuffer.wrap(heap);
            n = heap.length;
            copied += n;
            chunk = Math.min(chunk * 2, MAX_COPY_CHUNK);
          }
          list.add(view);
          collected += n;
        }
      } finally {
        detached.reset();
      }
      stats.onCopiedPieces(copied);
      return list;
    }
  }

  /** The next piece as a view of grpc-java's memory, or null when that piece has no byte buffer. */
  private static ByteBuffer nextView(HasByteBuffer buffers) {
    try {
      return buffers.getByteBuffer();
    } catch (UnsupportedOperationException heapPiece) {
      return null;
    }
  }

  /**
   * A body on its way into grpc-java's framer: {@link KnownLength} so the frame header can be written
   * first, {@link Drainable} so the body writes itself into the framer's buffers. Owns the body: releases
   * it after draining, and on close.
   */
  static final class BodyInputStream extends InputStream implements Drainable, KnownLength {
    private final Body body;
    private final int length;
    private InputStream fallback;
    private boolean drained;

    BodyInputStream(Body body) {
      long len = body.length();
      if (len < 0) {
        Body buffered;
        try {
          buffered = Body.of(body.toByteArray());
        } finally {
          body.release();
        }
        body = buffered;
        len = body.length();
      }
      if (len > Integer.MAX_VALUE) {
        body.release();
        throw Status.RESOURCE_EXHAUSTED
            .withDescription("message of " + len + " bytes is too large")
            .asRuntimeException();
      }
      this.body = body;
      this.length = (int) len;
    }

    @Override
    public int drainTo(OutputStream target) throws IOException {
      if (drained || fallback != null) {
        throw new IllegalStateException("message was already read");
      }
      drained = true;
      try {
        body.writeTo(target);
      } finally {
        body.release();
      }
      return length;
    }

    @Override
    public int available() throws IOException {
      if (drained) {
        return 0;
      }
      return fallback == null ? length : fallback.available();
    }

    @Override
    public int read() throws IOException {
      return open() == null ? -1 : fallback.read();
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      return open() == null ? -1 : fallback.read(b, off, len);
    }

    private InputStream open() {
      if (drained) {
        return null;
      }
      if (fallback == null) {
        fallback = body.openStream();
      }
      return fallback;
    }

    @Override
    public void close() {
      body.release();
    }
  }
}
