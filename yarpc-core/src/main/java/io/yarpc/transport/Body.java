package io.yarpc.transport;

import static java.util.Objects.requireNonNull;

import io.yarpc.internal.ByteBuffersInputStream;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Objects;

/**
 * The payload of a request, response or stream message.
 *
 * <h2>Reading</h2>
 *
 * Every body offers an {@link #openStream() InputStream}. A body whose bytes are already in memory (a
 * received gRPC frame, an aggregated HTTP body, a TChannel arg3, a {@code byte[]}) also offers <b>byte
 * access</b>: {@link #byteBuffers()} returns views of those bytes, heap or direct, without copying.
 * Heap views expose their backing array ({@link ByteBuffer#hasArray()}), so a parser can read it in place
 * (e.g. {@code CodedInputStream.newInstance(array, offset, length)}); direct views are read-only. Views are
 * for reading only: never write into one. Decoders must ask {@link #hasByteAccess()} first and parse straight from the views; only a body
 * without byte access is read through its stream. Two shortcuts serve parsers that need one array:
 * {@link #arrayView()} gives the body's own array when the body is exactly one region of one, and
 * {@link #copyTo(byte[], int)} copies any body into the caller's array.
 *
 * <h2>Writing</h2>
 *
 * {@link #writeTo(OutputStream)} writes the bytes into a transport's output (for Netty, a pooled buffer)
 * with no intermediate array; {@link #length()} tells the size up front where known. {@link #lazy}
 * bodies serialise only when written.
 *
 * <h2>Ownership</h2>
 *
 * A body has exactly one owner at a time, and the owner calls {@link #release()} once it is done; release
 * is idempotent and frees whatever pooled memory backs the body. Passing a body on passes ownership:
 *
 * <ul>
 *   <li>an inbound request body belongs to the invocation: the framework releases it when the handler's
 *       result completes (unary, oneway) or when the stream message has been consumed — handlers and
 *       encodings never release it themselves, and must copy any bytes they keep beyond that (the
 *       bytes of an {@linkplain #isImmutable() immutable} body excepted);
 *   <li>a response body returned by a handler belongs to the transport, which releases it once written;
 *   <li>a request body given to an outbound belongs to the outbound, which releases it once sent;
 *   <li>a response body returned by an outbound belongs to the caller (usually an encoding), which
 *       releases it after decoding.
 * </ul>
 *
 * Views from {@link #byteBuffers()} and streams from {@link #openStream()} must not be used after
 * release. Bodies are not thread-safe except for {@link #release()}.
 */
public abstract class Body implements Closeable {
  private static final byte[] NO_BYTES = new byte[0];

  private static final VarHandle RELEASED;

  static {
    try {
      RELEASED = MethodHandles.lookup().findVarHandle(Body.class, "released", boolean.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  // a field set through RELEASED, not an AtomicBoolean: one object less per body (a call has two or
  // more)
  private volatile boolean released;

  /** For subclasses: transports and encodings that bring their own kind of body. */
  protected Body() {}

  /** A body of zero bytes, with byte access. */
  public static Body empty() {
    return new HeapBody(NO_BYTES, 0, 0, false);
  }

  /** A body over {@code bytes} (not copied: do not mutate it afterwards), with byte access. */
  public static Body of(byte[] bytes) {
    return of(bytes, 0, bytes.length);
  }

  /** A body over {@code length} bytes of {@code bytes} from {@code offset}, not copied. */
  public static Body of(byte[] bytes, int offset, int length) {
    checkRange(bytes, offset, length);
    return new HeapBody(bytes, offset, length, false);
  }

  /**
   * A body over {@code length} bytes of {@code bytes} from {@code offset}, not copied, whose bytes nobody
   * writes to or reuses from now on, not even after the body is released: a decoder may keep references
   * into the array instead of copying values out of it (protobuf's aliasing), so the array lives as long
   * as anything decoded from it does ({@link #isImmutable()}). For an array allocated for one message
   * (as the HTTP transport receives a large h2c message), never for a pooled or reused one.
   */
  public static Body ofImmutable(byte[] bytes, int offset, int length) {
    checkRange(bytes, offset, length);
    return new HeapBody(bytes, offset, length, true);
  }

  /** A body over the remaining bytes of {@code buffer} (heap or direct; not copied), with byte access. */
  public static Body of(ByteBuffer buffer) {
    return ofBuffers(List.of(buffer), null);
  }

  /**
   * A body over bytes already in memory, split across {@code buffers} (their remaining bytes, in order),
   * with byte access. {@code onRelease} (may be null) runs exactly once, on the first {@link #release()}:
   * transports use it to return pooled memory.
   */
  public static Body ofBuffers(List<ByteBuffer> buffers, Runnable onRelease) {
    return new BuffersBody(List.copyOf(buffers), onRelease);
  }

  /**
   * A body read from {@code in} without byte access; {@code length} is its size or -1 when unknown. The
   * stream can be opened once; release closes it.
   */
  public static Body of(InputStream in, long length) {
    return new StreamBody(requireNonNull(in, "in"), length);
  }

  /**
   * A body of {@code length} bytes produced on demand by {@code writer}: nothing is serialised until the
   * body is written (or, as a fallback, streamed). Use it to encode a typed value straight into the
   * transport's buffer.
   */
  public static Body lazy(long length, BodyWriter writer) {
    if (length < 0) {
      throw new IllegalArgumentException("a lazy body needs its length, got " + length);
    }
    return new LazyBody(length, requireNonNull(writer, "writer"));
  }

  /** The size in bytes, or -1 when not known before reading. */
  public abstract long length();

  /** Whether {@link #byteBuffers()} can give the bytes without reading or copying. */
  public boolean hasByteAccess() {
    return false;
  }

  /**
   * Whether the bytes can be read or written again and again: true for bodies with byte access and for
   * {@link #lazy} bodies (whose writer runs once per write), false for bodies read from a stream. A call
   * that is retried ({@link io.yarpc.retry.RetryMiddleware}) sends a repeatable body again as it is and
   * reads any other into memory first.
   */
  public boolean isRepeatable() {
    return hasByteAccess();
  }

  /**
   * Views of the bytes, in order, positioned at the first byte; new views on each call, so callers may
   * move their positions. Heap views expose their array for in-place parsing, direct views are
   * read-only; callers never write into either.
   *
   * @throws UnsupportedOperationException when {@link #hasByteAccess()} is false
   */
  public List<ByteBuffer> byteBuffers() {
    throw new UnsupportedOperationException(getClass().getSimpleName() + " has no byte access");
  }

  /**
   * The bytes as one heap view exposing its array ({@link ByteBuffer#hasArray()}), positioned at the
   * first byte, when the body is exactly one region of one array, so that a parser can read it in place;
   * null for any other body. Asking is cheap: a body whose bytes are split or direct answers null without
   * collecting views.
   */
  public ByteBuffer arrayView() {
    return null;
  }

  /**
   * Whether the bytes behind {@link #arrayView()} never change and are never reused, even after release
   * ({@link #ofImmutable}): a decoder may then keep references into that array rather than copy. False
   * unless the body was made so; a body that wraps another may forward it (one that does not only
   * costs decoders a copy).
   */
  public boolean isImmutable() {
    return false;
  }

  /**
   * Copies all {@link #length()} bytes into {@code destination} from {@code offset}, for parsers that
   * need one array (e.g. a reused scratch array). Byte-access bodies copy from their views and stay as
   * they were (the built-in ones, and the transports', without allocating anything); other bodies are
   * read through their stream, once.
   *
   * @throws IllegalStateException when the length is unknown ({@code -1})
   * @throws IndexOutOfBoundsException when {@code destination} has no room for the bytes at {@code offset}
   * @throws IOException when the stream fails or ends before the length
   */
  public void copyTo(byte[] destination, int offset) throws IOException {
    checkNotReleased();
    int length = knownIntLength();
    Objects.checkFromIndexSize(offset, length, destination.length);
    if (hasByteAccess()) {
      for (ByteBuffer b : byteBuffers()) {
        int n = b.remaining();
        b.get(destination, offset, n);
        offset += n;
      }
      return;
    }
    try (InputStream in = openStream()) {
      int n = in.readNBytes(destination, offset, length);
      if (n != length) {
        throw new EOFException("body ended after " + n + " of " + length + " bytes");
      }
    }
  }

  private int knownIntLength() {
    long length = length();
    if (length < 0) {
      throw new IllegalStateException("the body's length is not known");
    }
    return Math.toIntExact(length);
  }

  /**
   * A stream over the bytes. Byte-access bodies may open any number of streams; other bodies may be
   * opened once.
   */
  public abstract InputStream openStream();

  /** Writes all bytes to {@code out} without closing it. */
  public void writeTo(OutputStream out) throws IOException {
    checkNotReleased();
    if (hasByteAccess()) {
      for (ByteBuffer b : byteBuffers()) {
        if (b.hasArray()) {
          out.write(b.array(), b.arrayOffset() + b.position(), b.remaining());
        } else {
          byte[] chunk = new byte[Math.min(b.remaining(), 8192)];
          while (b.hasRemaining()) {
            int n = Math.min(chunk.length, b.remaining());
            b.get(chunk, 0, n);
            out.write(chunk, 0, n);
          }
        }
      }
    } else {
      try (InputStream in = openStream()) {
        in.transferTo(out);
      }
    }
  }

  /**
   * A new array holding the bytes: one copy from byte access, or the stream read once. For callers that
   * need a {@code byte[]} they may keep (e.g. the raw encoding).
   */
  public byte[] toByteArray() {
    checkNotReleased();
    try {
      if (hasByteAccess()) {
        byte[] out = new byte[knownIntLength()];
        copyTo(out, 0);
        return out;
      }
      long len = length();
      try (InputStream in = openStream()) {
        if (len < 0) {
          return in.readAllBytes();
        }
        byte[] out =
            new byte[Math.toIntExact(len)]; // readNBytes(int) would collect chunks, then copy
        int n = in.readNBytes(out, 0, out.length);
        return n == out.length ? out : java.util.Arrays.copyOf(out, n);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Frees what backs this body, once; later calls do nothing. Thread-safe. */
  public final void release() {
    if (RELEASED.compareAndSet(this, false, true)) {
      deallocate();
    }
  }

  /** Whether {@link #release()} has been called. */
  public final boolean isReleased() {
    return released;
  }

  /** Same as {@link #release()}, so bodies work in try-with-resources. */
  @Override
  public final void close() {
    release();
  }

  /** Frees the body's resources; called exactly once, by the first {@link #release()}. */
  protected void deallocate() {}

  private static void checkRange(byte[] bytes, int offset, int length) {
    requireNonNull(bytes, "bytes");
    if (offset < 0 || length < 0 || length > bytes.length - offset) { // no int overflow
      throw new IndexOutOfBoundsException("offset " + offset + ", length " + length);
    }
  }

  /** Throws {@link IllegalStateException} when the body was released. */
  protected final void checkNotReleased() {
    if (released) {
      throw new IllegalStateException("body was already released");
    }
  }

  private static final class HeapBody extends Body {
    private final byte[] bytes;
    private final int offset;
    private final int length;
    private final boolean immutable;

    HeapBody(byte[] bytes, int offset, int length, boolean immutable) {
      this.bytes = bytes;
      this.offset = offset;
      this.length = length;
      this.immutable = immutable;
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
      checkNotReleased();
      return List.of(ByteBuffer.wrap(bytes, offset, length).slice());
    }

    @Override
    public ByteBuffer arrayView() {
      checkNotReleased();
      return ByteBuffer.wrap(bytes, offset, length).slice();
    }

    @Override
    public boolean isImmutable() {
      return immutable;
    }

    @Override
    public void copyTo(byte[] destination, int offset) {
      checkNotReleased();
      System.arraycopy(bytes, this.offset, destination, offset, length);
    }

    @Override
    public InputStream openStream() {
      checkNotReleased();
      return new java.io.ByteArrayInputStream(bytes, offset, length);
    }

    @Override
    public void writeTo(OutputStream out) throws IOException {
      checkNotReleased();
      out.write(bytes, offset, length);
    }

    @Override
    public byte[] toByteArray() {
      checkNotReleased();
      return java.util.Arrays.copyOfRange(bytes, offset, offset + length);
    }
  }

  private static final class BuffersBody extends Body {
    private final List<ByteBuffer> buffers;
    private final Runnable onRelease;
    private final long length;

    BuffersBody(List<ByteBuffer> buffers, Runnable onRelease) {
      this.buffers = buffers;
      this.onRelease = onRelease;
      long len = 0;
      for (ByteBuffer b : buffers) {
        len += b.remaining();
      }
      this.length = len;
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
      checkNotReleased();
      if (buffers.size() == 1) {
        return List.of(view(buffers.get(0)));
      }
      ByteBuffer[] views = new ByteBuffer[buffers.size()];
      for (int i = 0; i < views.length; i++) {
        views[i] = view(buffers.get(i));
      }
      return List.of(views);
    }

    @Override
    public ByteBuffer arrayView() {
      checkNotReleased();
      if (buffers.size() != 1 || !buffers.get(0).hasArray()) {
        return null;
      }
      return buffers.get(0).duplicate();
    }

    /** Absolute bulk gets from the buffers themselves: no view objects. */
    @Override
    public void copyTo(byte[] destination, int offset) {
      checkNotReleased();
      Objects.checkFromIndexSize(offset, Math.toIntExact(length), destination.length);
      for (ByteBuffer b : buffers) {
        int n = b.remaining();
        b.get(b.position(), destination, offset, n);
        offset += n;
      }
    }

    /** Heap: a duplicate, so the array stays reachable for in-place parsing; direct: read-only. */
    private static ByteBuffer view(ByteBuffer b) {
      return b.isDirect() ? b.asReadOnlyBuffer() : b.duplicate();
    }

    @Override
    public InputStream openStream() {
      return new ByteBuffersInputStream(byteBuffers());
    }

    @Override
    protected void deallocate() {
      if (onRelease != null) {
        onRelease.run();
      }
    }
  }

  private static final class StreamBody extends Body {
    private final InputStream in;
    private final long length;
    private boolean opened;

    StreamBody(InputStream in, long length) {
      this.in = in;
      this.length = length;
    }

    @Override
    public long length() {
      return length;
    }

    @Override
    public InputStream openStream() {
      checkNotReleased();
      if (opened) {
        throw new IllegalStateException("a stream body can be read once");
      }
      opened = true;
      return in;
    }

    @Override
    protected void deallocate() {
      try {
        in.close();
      } catch (IOException ignored) {
        // nothing left to do with a stream we are discarding
      }
    }
  }

  private static final class LazyBody extends Body {
    private final long length;
    private final BodyWriter writer;

    LazyBody(long length, BodyWriter writer) {
      this.length = length;
      this.writer = writer;
    }

    @Override
    public boolean isRepeatable() {
      return true;
    }

    @Override
    public long length() {
      return length;
    }

    @Override
    public void writeTo(OutputStream out) throws IOException {
      checkNotReleased();
      writer.writeTo(out);
    }

    @Override
    public InputStream openStream() {
      checkNotReleased();
      ByteArrayOutputStream out = new ByteArrayOutputStream(Math.toIntExact(length));
      try {
        writer.writeTo(out);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      return new java.io.ByteArrayInputStream(out.toByteArray());
    }
  }
}
