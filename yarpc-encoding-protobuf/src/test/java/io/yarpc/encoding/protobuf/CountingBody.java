package io.yarpc.encoding.protobuf;

import io.yarpc.transport.Body;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * A body over given bytes, in the shape a transport might hand them over, that counts how it is read:
 * {@link #byteBuffersCalls} (reads through byte access: {@link #byteBuffers()}, or {@link #arrayView()}
 * when it gives the array) and {@link #openStreamCalls}. Proves which decode path an encoding took.
 */
public final class CountingBody extends Body {
  /** How the bytes are exposed. */
  public enum Shape {
    /** One heap view with an accessible array (an aggregated HTTP body in heap memory). */
    HEAP,
    /** One heap view at a non-zero array offset. */
    HEAP_OFFSET,
    /** One direct view (a received Netty buffer). */
    DIRECT,
    /** Several heap views (frames). */
    MULTI_HEAP,
    /** Several direct views. */
    MULTI_DIRECT,
    /** No byte access, length known. */
    STREAM,
    /** No byte access, length unknown. */
    STREAM_UNKNOWN_LENGTH
  }

  private final Shape shape;
  private final byte[] bytes;
  private final byte[] backing;
  private final int offset;
  private final List<ByteBuffer> views = new ArrayList<>();
  public int byteBuffersCalls;
  public int openStreamCalls;

  public CountingBody(byte[] bytes, Shape shape) {
    this.shape = shape;
    this.bytes = bytes;
    if (shape == Shape.HEAP_OFFSET) {
      offset = 7;
      backing = new byte[bytes.length + 13];
      System.arraycopy(bytes, 0, backing, offset, bytes.length);
    } else {
      offset = 0;
      backing = bytes;
    }
    switch (shape) {
      case HEAP:
      case HEAP_OFFSET:
        views.add(ByteBuffer.wrap(backing, offset, bytes.length).slice());
        break;
      case DIRECT:
        views.add(direct(bytes, 0, bytes.length));
        break;
      case MULTI_HEAP:
      case MULTI_DIRECT:
        int chunk = Math.max(1, bytes.length / 3 + 1);
        for (int off = 0; off < bytes.length; off += chunk) {
          int n = Math.min(chunk, bytes.length - off);
          views.add(
              shape == Shape.MULTI_HEAP
                  ? ByteBuffer.wrap(bytes, off, n).slice()
                  : direct(bytes, off, n));
        }
        if (views.size() < 2) {
          views.add(ByteBuffer.allocate(0));
        }
        break;
      default:
        break;
    }
  }

  private static ByteBuffer direct(byte[] bytes, int off, int n) {
    ByteBuffer b = ByteBuffer.allocateDirect(n);
    b.put(bytes, off, n).flip();
    return b;
  }

  /** The array a heap view exposes (to check in-place parsing). */
  public byte[] backingArray() {
    return backing;
  }

  @Override
  public long length() {
    return shape == Shape.STREAM_UNKNOWN_LENGTH ? -1 : bytes.length;
  }

  @Override
  public boolean hasByteAccess() {
    return shape != Shape.STREAM && shape != Shape.STREAM_UNKNOWN_LENGTH;
  }

  @Override
  public List<ByteBuffer> byteBuffers() {
    checkNotReleased();
    if (!hasByteAccess()) {
      throw new UnsupportedOperationException("no byte access");
    }
    byteBuffersCalls++;
    List<ByteBuffer> out = new ArrayList<>(views.size());
    for (ByteBuffer v : views) {
      out.add(v.isDirect() ? v.asReadOnlyBuffer() : v.duplicate());
    }
    return out;
  }

  @Override
  public ByteBuffer arrayView() {
    checkNotReleased();
    if (shape != Shape.HEAP && shape != Shape.HEAP_OFFSET) {
      return null;
    }
    byteBuffersCalls++;
    return views.get(0).duplicate();
  }

  @Override
  public InputStream openStream() {
    checkNotReleased();
    openStreamCalls++;
    return new ByteArrayInputStream(bytes);
  }
}
