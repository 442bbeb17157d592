package io.yarpc.encoding.protobuf.unsafe;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.Message;
import com.google.protobuf.Parser;
import io.yarpc.encoding.protobuf.ProtobufCodec;
import io.yarpc.encoding.protobuf.internal.AliasingPools;
import io.yarpc.encoding.protobuf.internal.ArrayPool;
import io.yarpc.encoding.protobuf.internal.ProtoDecoding;
import io.yarpc.transport.Body;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * <b>Unsafe, opt-in:</b> decodes binary protobuf requests with <em>aliasing</em>, so that {@code bytes}
 * fields point into a pooled heap array instead of being copied, and gives the array back to the pool
 * when the call ends. Per 1 MiB request this allocates next to nothing (the default path allocates the
 * payload once more, for the copied {@code bytes} field).
 *
 * <pre>{@code
 * UnsafeAliasing aliasing = UnsafeAliasing.create();   // one pool, shared by any number of services
 * dispatcher.register(ProtobufProcedures.builder(new EchoImpl()).unsafeAliasing(aliasing).build());
 * }</pre>
 *
 * <h2>The hazard</h2>
 *
 * A {@code ByteString} (and anything derived from it without copying, e.g. {@code asReadOnlyByteBuffer()},
 * {@code substring}) taken from a request decoded this way is only valid <b>until the call ends</b>. After
 * that the array goes back to the pool and the next request overwrites it: a request field kept beyond the
 * call — stored in a cache or a field, handed to another thread that outlives the call — silently sees
 * another request's bytes. Copy what you keep ({@code ByteString.copyFrom(field.toByteArray())}, or
 * {@code ByteString.copyFrom(field.asReadOnlyByteBuffer())}). Only use this for services that you have
 * checked for that, and whose payloads are big enough for the saving to matter.
 *
 * <h2>What "the call ends" means</h2>
 *
 * <ul>
 *   <li>Unary methods, binary encoding (the only ones decoded this way; streams and JSON use the default
 *       path): the request's bytes are copied once into an array borrowed from this pool (also when the
 *       body is a heap view: the transport may reuse its buffer as soon as the call ends, while the array
 *       must outlive it — see the next point) and parsed with aliasing.
 *   <li>The array is given back when the method's result is complete <em>and</em> the transport has
 *       released the response body: a response message may point into the request (an echo of a {@code
 *       bytes} field), and it is serialised only when the transport writes it.
 * </ul>
 *
 * <h2>The pool</h2>
 *
 * Arrays come in power-of-two sizes from 4 KiB up to {@link Builder#maxArrayBytes} (default 8 MiB);
 * bigger requests get a one-off array that is not pooled (still aliased, freed by the garbage collector).
 * At most {@link Builder#maxPooledBytes} (default 64 MiB) wait in the pool; arrays given back beyond that
 * are dropped. Thread-safe.
 */
public final class UnsafeAliasing {
  private static final int MIN_SHIFT = 12; // 4 KiB

  static {
    AliasingPools.register(aliasing -> aliasing.pool);
  }

  private final int maxArrayBytes;
  private final long maxPooledBytes;
  private final List<ConcurrentLinkedDeque<byte[]>> buckets;
  private final AtomicLong pooledBytes = new AtomicLong();
  private final LongAdder allocated = new LongAdder();
  private final LongAdder borrowed = new LongAdder();
  private final ArrayPool pool =
      new ArrayPool() {
        @Override
        public byte[] borrow(int minLength) {
          return UnsafeAliasing.this.borrow(minLength);
        }

        @Override
        public void giveBack(byte[] array) {
          UnsafeAliasing.this.giveBack(array);
        }
      };

  private UnsafeAliasing(Builder b) {
    this.maxArrayBytes = b.maxArrayBytes;
    this.maxPooledBytes = b.maxPooledBytes;
    int maxShift = 31 - Integer.numberOfLeadingZeros(maxArrayBytes);
    List<ConcurrentLinkedDeque<byte[]>> list = new ArrayList<>();
    for (int i = 0; i < Math.max(0, maxShift - MIN_SHIFT + 1); i++) {
      list.add(new ConcurrentLinkedDeque<>());
    }
    this.buckets = List.copyOf(list);
  }

  /** A pool with the default limits. */
  public static UnsafeAliasing create() {
    return builder().build();
  }

  /** A builder for a pool with other limits. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Decodes {@code body} (binary encoding; not released) with aliasing into an array from this pool. The
   * returned message is valid until {@link Aliased#close()}, which gives the array back; close it exactly
   * when nothing reads the message (or anything taken from it without a copy) any more.
   *
   * @throws com.google.protobuf.InvalidProtocolBufferException for malformed input (the array is given
   *     back)
   */
  public <T extends Message> Aliased<T> decode(ProtobufCodec<T> codec, Body body)
      throws IOException {
    @SuppressWarnings("unchecked")
    Parser<T> parser = (Parser<T>) codec.prototype().getParserForType();
    ProtoDecoding.Aliased<T> a =
        ProtoDecoding.parseAliased(parser, requireNonNull(body, "body"), pool);
    return new Aliased<>(a.message(), a.array(), pool);
  }

  /** An array of at least {@code minLength} bytes: pooled up to the maximum array size, else a one-off. */
  private byte[] borrow(int minLength) {
    borrowed.increment();
    int bucket = bucketFor(minLength);
    if (bucket >= 0) {
      byte[] a = buckets.get(bucket).pollFirst();
      if (a != null) {
        pooledBytes.addAndGet(-a.length);
        return a;
      }
      allocated.increment();
      return new byte[1 << (bucket + MIN_SHIFT)];
    }
    allocated.increment();
    return new byte[Math.max(minLength, 0)];
  }

  /** Takes back an array from {@link #borrow}; nothing may read it, or alias it, afterwards. */
  private void giveBack(byte[] array) {
    int len = array.length;
    if (Integer.bitCount(len) != 1 || len < (1 << MIN_SHIFT) || len > maxArrayBytes) {
      return; // a one-off
    }
    if (pooledBytes.addAndGet(len) > maxPooledBytes) {
      pooledBytes.addAndGet(-len);
      return;
    }
    buckets.get(Integer.numberOfTrailingZeros(len) - MIN_SHIFT).addFirst(array);
  }

  private int bucketFor(int minLength) {
    if (minLength > maxArrayBytes) {
      return -1;
    }
    int size = Math.max(minLength, 1 << MIN_SHIFT);
    int shift = 32 - Integer.numberOfLeadingZeros(size - 1);
    int bucket = shift - MIN_SHIFT;
    return bucket < buckets.size() ? bucket : -1;
  }

  /** How many arrays this pool has allocated (pooled or one-off). */
  public long allocatedArrays() {
    return allocated.sum();
  }

  /** How many arrays were borrowed. */
  public long borrowedArrays() {
    return borrowed.sum();
  }

  /** Bytes waiting in the pool now. */
  public long pooledBytes() {
    return pooledBytes.get();
  }

  @Override
  public String toString() {
    return "UnsafeAliasing{maxArrayBytes="
        + maxArrayBytes
        + ", maxPooledBytes="
        + maxPooledBytes
        + ", pooledBytes="
        + pooledBytes.get()
        + "}";
  }

  /**
   * A message decoded with aliasing and the array it points into. {@link #close()} gives the array back
   * (once; later calls do nothing); the message must not be read afterwards.
   *
   * @param <T> the message type
   */
  public static final class Aliased<T> implements AutoCloseable {
    private final T message;
    private final byte[] array;
    private final ArrayPool pool;
    private final AtomicBoolean closed = new AtomicBoolean();

    private Aliased(T message, byte[] array, ArrayPool pool) {
      this.message = message;
      this.array = array;
      this.pool = pool;
    }

    /** The message; valid until {@link #close()}. */
    public T message() {
      return message;
    }

    /** Gives the array back to the pool. */
    @Override
    public void close() {
      if (closed.compareAndSet(false, true)) {
        pool.giveBack(array);
      }
    }
  }

  /** Builds an {@link UnsafeAliasing} pool; not thread-safe. */
  public static final class Builder {
    private int maxArrayBytes = 8 << 20;
    private long maxPooledBytes = 64L << 20;

    private Builder() {}

    /** The largest array pooled, rounded down to a power of two, at least 4 KiB; default 8 MiB. */
    public Builder maxArrayBytes(int bytes) {
      if (bytes < (1 << MIN_SHIFT)) {
        throw new IllegalArgumentException("maxArrayBytes must be at least 4096, got " + bytes);
      }
      this.maxArrayBytes = Integer.highestOneBit(bytes);
      return this;
    }

    /** The most bytes kept waiting in the pool; default 64 MiB. */
    public Builder maxPooledBytes(long bytes) {
      if (bytes < 0) {
        throw new IllegalArgumentException("maxPooledBytes must not be negative, got " + bytes);
      }
      this.maxPooledBytes = bytes;
      return this;
    }

    /** The pool. */
    public UnsafeAliasing build() {
      return new UnsafeAliasing(this);
    }
  }
}
