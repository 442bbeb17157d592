package io.yarpc.testing;

import static java.util.Objects.requireNonNull;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.buffer.PooledByteBufAllocator;
import io.yarpc.Outbounds;
import io.yarpc.errors.ApplicationErrorMeta;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.WireText;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Headers;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.Transport;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A transport that connects dispatchers in the same JVM, for unit tests of services and clients and as
 * the reference implementation of the {@link TransportConformanceSuite}.
 *
 * <p>It behaves like a network transport wherever that matters to the code above it:
 *
 * <ul>
 *   <li><b>Bodies are copied</b>: the receiving side never sees the body object the sender gave, but a
 *       fresh body over pooled Netty memory (direct by default) with byte access, split into views of at
 *       most {@link Builder#maxBufferSize} bytes like a received frame; the sender's body is released
 *       once sent. Released memory is overwritten ({@link Builder#poisonReleasedMemory}), so code that
 *       keeps reading a body after releasing it sees garbage instead of passing by luck.
 *   <li><b>Every body it hands out is tracked</b> by its {@link #bodyTracker()}, so a test can check
 *       that the framework released each request, response and stream message exactly once and never
 *       read one after release ({@link #assertNoLeaks()}). The pooled buffers also take part in Netty's
 *       leak detection.
 *   <li><b>Metadata travels</b> as on a wire: headers are rebuilt, the deadline becomes a remaining TTL
 *       from which the server side starts a new {@link Deadline}, and {@link RequestMeta#transport()} is
 *       {@value #NAME} on the server.
 *   <li><b>Errors</b> come back as new {@link YarpcException}s with code, message, name and details (and
 *       an attached response, copied) preserved; nothing else of the server's exception crosses.
 *   <li><b>Asynchrony</b>: requests are delivered and results completed on the transport's own I/O
 *       threads, never on the caller's thread.
 *   <li><b>Cancellation</b>: cancelling a unary call's future cancels the server's call; cancelling a
 *       stream cancels the handler.
 *   <li><b>Streams</b> have real flow control: {@code receive()} asks for exactly one message and a
 *       {@code send()} future completes only once the receiver asked for the message or it fits in a
 *       window of {@link Builder#streamWindow} unrequested messages.
 * </ul>
 *
 * <p>One transport is one "address": at most one of its {@linkplain #inbound() inbounds} runs at a time,
 * and its {@linkplain #outbound() outbounds} reach whichever does.
 *
 * <pre>{@code
 * InMemoryTransport transport = InMemoryTransport.create();
 * Dispatcher server = Dispatcher.builder("keyvalue").inbound(transport.inbound()).build();
 * server.register(Raw.procedure("echo", body -> body));
 * server.start();
 * Dispatcher client = Dispatcher.builder("keyvalue-client")
 *     .outbound("keyvalue", transport.outbounds())
 *     .build();
 * client.start();
 *
 * byte[] answer = RawClient.of(client.clientConfig("keyvalue"))
 *     .call("echo", "hi".getBytes(UTF_8), CallOptions.timeout(Duration.ofSeconds(1)))
 *     .join();
 *
 * client.stop();
 * server.stop();
 * transport.assertNoLeaks(); // every body was released exactly once
 * }</pre>
 *
 * <p>The transport itself holds no resources that need starting or stopping ({@link #start()} and
 * {@link #stop()} only change {@link #isRunning()}), so client and server dispatchers may share it and it
 * may be started again. Thread-safe.
 */
public final class InMemoryTransport implements Transport {
  /** The transport's name, as in {@link RequestMeta#transport()}. */
  public static final String NAME = "in-memory";

  private static final AtomicInteger THREADS = new AtomicInteger();
  private static final byte[] POISON = new byte[8192];

  static {
    java.util.Arrays.fill(POISON, (byte) 0xDD);
  }

  private final BodyTracker tracker;
  private final ByteBufAllocator allocator;
  private final boolean directBuffers;
  private final int maxBufferSize;
  private final boolean poison;
  private final int streamWindow;
  private final Executor executor;
  private final AtomicReference<InMemoryInbound> bound = new AtomicReference<>();
  private volatile boolean running;

  private InMemoryTransport(Builder b) {
    this.tracker = b.tracker != null ? b.tracker : new BodyTracker();
    this.allocator = b.allocator;
    this.directBuffers = b.directBuffers;
    this.maxBufferSize = b.maxBufferSize;
    this.poison = b.poisonReleasedMemory;
    this.streamWindow = b.streamWindow;
    this.executor = b.executor != null ? b.executor : defaultExecutor();
  }

  /** A transport with the default settings. */
  public static InMemoryTransport create() {
    return builder().build();
  }

  /** A builder for a transport with non-default settings. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * A new inbound on this transport; give it to the server dispatcher. At most one inbound of a
   * transport may run at a time (starting a second one fails, like binding a port in use).
   */
  public InMemoryInbound inbound() {
    return new InMemoryInbound(this);
  }

  /** A new outbound to this transport's running inbound: unary, oneway and stream in one object. */
  public InMemoryOutbound outbound() {
    return new InMemoryOutbound(this);
  }

  /** {@link Outbounds} for a client dispatcher, all three RPC types served by one new {@link #outbound()}. */
  public Outbounds outbounds() {
    InMemoryOutbound out = outbound();
    return Outbounds.builder().unary(out).oneway(out).stream(out).build();
  }

  /** The tracker of every body this transport handed out. */
  public BodyTracker bodyTracker() {
    return tracker;
  }

  /**
   * Fails unless every body this transport handed out was released (waiting up to
   * {@link BodyTracker#DEFAULT_WAIT} for releases still under way) and none was read after release.
   *
   * @throws AssertionError describing the bodies not released and the violations
   */
  public void assertNoLeaks() {
    tracker.assertAllReleased();
  }

  /** Marks the transport running; there is nothing to start. */
  @Override
  public void start() {
    running = true;
  }

  /** Marks the transport stopped; inbounds and outbounds stop on their own. */
  @Override
  public void stop() {
    running = false;
  }

  @Override
  public boolean isRunning() {
    return running;
  }

  @Override
  public String toString() {
    return "InMemoryTransport@" + Integer.toHexString(System.identityHashCode(this));
  }

  // ---- what inbounds and outbounds share
  // ------------------------------------------------------------

  int streamWindow() {
    return streamWindow;
  }

  void bind(InMemoryInbound inbound) {
    if (!bound.compareAndSet(null, inbound)) {
      throw new IllegalStateException("another in-memory inbound is already running on " + this);
    }
  }

  void unbind(InMemoryInbound inbound) {
    bound.compareAndSet(inbound, null);
  }

  /** The running inbound, or {@code null}. */
  InMemoryInbound target() {
    return bound.get();
  }

  /** Runs {@code task} on an I/O thread (inline once the executor refuses work). */
  void execute(Runnable task) {
    try {
      executor.execute(task);
    } catch (RejectedExecutionException e) {
      task.run();
    }
  }

  /**
   * "Sends" {@code source}: copies its bytes into fresh pooled memory and returns a tracked body over
   * them, with byte access. Always releases {@code source}.
   *
   * @throws YarpcException when the body cannot be read or does not hold the bytes it promised
   */
  Body transmit(Body source, String label) {
    try {
      long promised = source.length();
      int initial = promised > 0 ? (int) Math.min(promised, Integer.MAX_VALUE - 8) : 256;
      ByteBuf buf = directBuffers ? allocator.directBuffer(initial) : allocator.heapBuffer(initial);
      try {
        if (source.hasByteAccess()) {
          for (ByteBuffer b : source.byteBuffers()) {
            buf.writeBytes(b);
          }
        } else {
          try (ByteBufOutputStream out = new ByteBufOutputStream(buf)) {
            source.writeTo(out);
          }
        }
        if (promised >= 0 && buf.readableBytes() != promised) {
          throw YarpcException.of(
              Code.INTERNAL,
              "%s: the body promised %d bytes but held %d",
              label,
              promised,
              buf.readableBytes());
        }
        return tracker.track(received(buf), label);
      } catch (Throwable t) {
        buf.release();
        throw t;
      }
    } catch (YarpcException e) {
      throw e;
    } catch (Throwable t) {
      throw YarpcException.withCause(
          Code.INTERNAL, label + ": could not read the body: " + YarpcException.describe(t), t);
    } finally {
      source.release();
    }
  }

  private Body received(ByteBuf buf) {
    int length = buf.readableBytes();
    ByteBuffer whole = buf.nioBuffer(buf.readerIndex(), length).slice(); // position 0, limit length
    List<ByteBuffer> views =
        new ArrayList<>(Math.max(1, (length + maxBufferSize - 1) / maxBufferSize));
    for (int off = 0; off < length; off += maxBufferSize) {
      views.add(whole.slice(off, Math.min(maxBufferSize, length - off)));
    }
    if (views.isEmpty()) {
      views.add(whole);
    }
    return Body.ofBuffers(
        views,
        () -> {
          if (poison) {
            ByteBuffer dup = whole.duplicate();
            while (dup.hasRemaining()) {
              dup.put(POISON, 0, Math.min(POISON.length, dup.remaining()));
            }
          }
          buf.release();
        });
  }

  /** The response as the client receives it; releases {@code response}'s body. */
  Response transmit(Response response, String label) {
    Headers headers = copy(response.headers());
    Body body = transmit(response.body(), label);
    Response.Builder b = Response.builder().headers(headers).body(body);
    if (response.isApplicationError()) {
      ApplicationErrorMeta m = response.applicationErrorMeta();
      // details are cut as every transport cuts them on its wire
      b.applicationError(
          new ApplicationErrorMeta(
              m.code(), m.name(), m.details() == null ? null : WireText.details(m.details())));
    }
    return b.build();
  }

  /**
   * The error as the other side receives it: a new exception with the same code, message, name and
   * details (and a copy of the attached response, whose body is released).
   */
  YarpcException transmit(Throwable error, String label) {
    YarpcException e = YarpcException.from(error);
    YarpcException copy = YarpcException.of(e.code(), "%s", e.getMessage());
    if (e.name() != null) {
      copy = copy.withName(e.name());
    }
    if (e.details() != null) {
      copy = copy.withDetails(e.details().clone());
    }
    if (e.response() != null) {
      try {
        copy = copy.withResponse(transmit(e.response(), label));
      } catch (YarpcException failed) {
        // The error still reaches the caller, without the response that could not be sent.
      }
    }
    return copy;
  }

  /** Like {@link #transmit(Throwable, String)} but without any attached response (released if present). */
  YarpcException transmitStatus(Throwable error, String label) {
    YarpcException e = YarpcException.from(error);
    if (e.response() != null) {
      e.response().body().release();
      e = e.withResponse(null);
    }
    return transmit(e, label);
  }

  /** Headers rebuilt entry by entry, as a wire would. */
  static Headers copy(Headers headers) {
    if (headers.isEmpty()) {
      return Headers.empty();
    }
    Headers.Builder b = Headers.builder();
    headers.forEachOriginal(b::add);
    return b.build();
  }

  /** The remaining TTL in nanoseconds, or {@code Long.MIN_VALUE} when there is no deadline. */
  static long ttl(RequestMeta meta) {
    return meta.deadline() == null ? Long.MIN_VALUE : meta.deadline().remainingNanos();
  }

  /** The metadata as the server receives it: headers rebuilt, a new deadline from the TTL. */
  static RequestMeta serverMeta(RequestMeta meta, long ttlNanos) {
    return meta.toBuilder()
        .headers(copy(meta.headers()))
        .transport(NAME)
        .deadline(
            ttlNanos == Long.MIN_VALUE ? null : Deadline.after(ttlNanos, TimeUnit.NANOSECONDS))
        .build();
  }

  private static Executor defaultExecutor() {
    ThreadPoolExecutor pool =
        new ThreadPoolExecutor(
            0,
            Integer.MAX_VALUE,
            2,
            TimeUnit.SECONDS,
            new SynchronousQueue<>(),
            r -> {
              Thread t = new Thread(r, "yarpc-in-memory-io-" + THREADS.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    return pool;
  }

  /** Builds an {@link InMemoryTransport}; not thread-safe. */
  public static final class Builder {
    private BodyTracker tracker;
    private ByteBufAllocator allocator = PooledByteBufAllocator.DEFAULT;
    private boolean directBuffers = true;
    private int maxBufferSize = 16 * 1024;
    private boolean poisonReleasedMemory = true;
    private int streamWindow = 1;
    private Executor executor;

    private Builder() {}

    /** The tracker to count bodies with (default: a new one), e.g. to share one between transports. */
    public Builder bodyTracker(BodyTracker tracker) {
      this.tracker = requireNonNull(tracker, "tracker");
      return this;
    }

    /** The allocator for received bodies; default {@link PooledByteBufAllocator#DEFAULT}. */
    public Builder allocator(ByteBufAllocator allocator) {
      this.allocator = requireNonNull(allocator, "allocator");
      return this;
    }

    /** Whether received bodies live in direct memory (default) or on the heap (views with arrays). */
    public Builder directBuffers(boolean directBuffers) {
      this.directBuffers = directBuffers;
      return this;
    }

    /**
     * The largest view a received body's byte access returns (default 16 KiB): bigger bodies come as
     * several buffers, as frames from a network do.
     */
    public Builder maxBufferSize(int maxBufferSize) {
      if (maxBufferSize < 1) {
        throw new IllegalArgumentException("maxBufferSize must be positive, got " + maxBufferSize);
      }
      this.maxBufferSize = maxBufferSize;
      return this;
    }

    /** Whether released bodies' memory is overwritten before it returns to the pool (default true). */
    public Builder poisonReleasedMemory(boolean poison) {
      this.poisonReleasedMemory = poison;
      return this;
    }

    /**
     * How many stream messages a sender may have waiting at the receiver beyond those it asked for
     * before its {@code send} futures stall (default 1; 0 makes every send wait for a receive).
     */
    public Builder streamWindow(int messages) {
      if (messages < 0) {
        throw new IllegalArgumentException("streamWindow must not be negative, got " + messages);
      }
      this.streamWindow = messages;
      return this;
    }

    /**
     * The executor that plays the I/O threads: delivers requests and completes results. Default: a
     * transport-owned pool of daemon threads that exit when idle.
     */
    public Builder executor(Executor executor) {
      this.executor = requireNonNull(executor, "executor");
      return this;
    }

    /** The transport. */
    public InMemoryTransport build() {
      return new InMemoryTransport(this);
    }
  }
}
