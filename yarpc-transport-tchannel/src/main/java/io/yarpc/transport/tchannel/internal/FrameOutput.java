package io.yarpc.transport.tchannel.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import io.netty.util.internal.PlatformDependent;
import io.yarpc.transport.Body;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Where one connection's frames go: the connection handler's context, the allocator for the frames this
 * side writes, and the connection's event loop. {@link MessageWriter} cuts a message into frames; this
 * class puts finished frames on the channel. Shared by the handshake-free parts of a {@link Connection}
 * ({@link IncomingCalls}, {@link OutgoingCalls}) so that they need no reference to the handler itself.
 *
 * <p>Flushes: a flush is a system call, so they are shared. Frames written while the connection hands on
 * what one read brought are flushed once when the read ends ({@link #readComplete}); frames that other
 * threads hand over ({@link #writeSoon}: requests from callers, responses from handler threads) are
 * written by one event loop task per batch and flushed once at its end, as grpc-java's write queue and
 * Netty's {@code FlushConsolidationHandler} do. Anything else flushes at once.
 *
 * <p>Threads: {@link #attach} is called once, from {@code handlerAdded}, before any other method; the
 * write methods are called on the event loop; {@link #writeSoon}, {@link #runOnLoop}, {@link #channel}
 * and {@link #alloc} from any thread.
 *
 * <p>Buffers: every frame handed to a write method belongs to the channel from then on (Netty releases it
 * once written or failed). {@link #writeMessage} also takes the message's body and releases it exactly
 * once: at once when the frames hold a copy of it, otherwise when the last frame has been written or has
 * failed. {@link #releaseAll} is for frames and bodies that will never be written.
 */
final class FrameOutput {
  /** Told about every flush, on the event loop: the connection's idle and write-progress watch. */
  interface FlushListener {
    /**
     * Frames were written and flushed.
     *
     * @param callMessage whether they were a call message's (call req or res frames, or the error frame
     *     that replaces a call res), which counts as activity on the connection
     */
    void flushed(boolean callMessage);
  }

  /**
   * Work for the event loop handed over by another thread through {@link #writeSoon}: it runs in a batch
   * with the others waiting, and the frames it writes are flushed once for the whole batch.
   */
  interface LoopWrite {
    /** Event loop: writes (with {@link #writeMessage}) or gives up. */
    void write();

    /** Any thread: the event loop is gone and {@link #write} will never run. */
    void rejected();
  }

  private static final FlushListener NONE = callMessage -> {};

  private final ByteBufAllocator alloc;
  private volatile ChannelHandlerContext ctx;
  private FlushListener listener = NONE;
  // event loop only: frames are being read, or a batch of LoopWrites runs; writes wait for its end
  private boolean reading;
  private boolean draining;
  private boolean unflushed;
  private boolean unflushedCall;
  private final Queue<LoopWrite> queued = PlatformDependent.newMpscQueue();
  private final AtomicBoolean drainScheduled = new AtomicBoolean();
  private final Runnable drain = this::drain;

  /** An output whose frames are allocated from {@code alloc} (the transport's pooled direct memory). */
  FrameOutput(ByteBufAllocator alloc) {
    this.alloc = alloc;
  }

  /** Binds the output to the connection handler's context; once, before anything is written. */
  void attach(ChannelHandlerContext ctx) {
    this.ctx = ctx;
  }

  /** Sets the listener told about every flush; before anything is written. */
  void listen(FlushListener listener) {
    this.listener = listener;
  }

  /** The allocator for frames this side writes. */
  ByteBufAllocator alloc() {
    return alloc;
  }

  /** The channel (null before {@link #attach}). */
  Channel channel() {
    ChannelHandlerContext c = ctx;
    return c == null ? null : c.channel();
  }

  /** Whether the channel is open and connected. */
  boolean isOpen() {
    return ctx.channel().isActive();
  }

  /**
   * Event loop: the connection starts handing on what one read brought; until {@link #readComplete},
   * frames are written without a flush.
   */
  void reading() {
    reading = true;
  }

  /**
   * Event loop: the read is over; what was written during it is flushed (one system call for all: the
   * answers to a read's frames, and the responses of handlers that completed on the event loop).
   */
  void readComplete() {
    reading = false;
    flushIfNeeded();
  }

  private void flushIfNeeded() {
    if (unflushed) {
      boolean call = unflushedCall;
      unflushed = false;
      unflushedCall = false;
      ctx.flush();
      listener.flushed(call);
    }
  }

  /** Whether a flush waits for the end of a read or of a batch. */
  private boolean batching() {
    return reading || draining;
  }

  /**
   * Event loop: writes a frame that answers one just read (a ping res, an error frame); while a read is
   * being handed on, the flush waits for its end, so a flood of small frames costs one flush per read
   * instead of one per frame.
   */
  void writeAnswer(ByteBuf frame) {
    if (batching()) {
      ctx.write(frame, ctx.voidPromise());
      unflushed = true;
    } else {
      writeAndFlush(frame);
    }
  }

  /** Event loop: writes one frame and flushes (with it whatever else waits for a flush). */
  ChannelFuture writeAndFlush(ByteBuf frame) {
    unflushed = false;
    unflushedCall = false;
    ChannelFuture f = ctx.writeAndFlush(frame);
    listener.flushed(false);
    return f;
  }

  /**
   * Event loop: writes a message's frames; {@code body} is released once they are written (at once when
   * no frame refers to it: {@link MessageWriter} then copied it). They are flushed now, or, during a read
   * or a batch of {@link LoopWrite}s, once at its end.
   */
  void writeMessage(List<ByteBuf> frames, Body body) {
    ChannelHandlerContext c = ctx;
    int n = frames.size();
    boolean referencesBody = false;
    for (int i = 0; i < n; i++) {
      referencesBody |= frames.get(i) instanceof CompositeByteBuf;
    }
    if (body != null && !referencesBody) {
      body.release();
      body = null;
    }
    ChannelPromise void_ = c.voidPromise();
    for (int i = 0; i < n - 1; i++) {
      c.write(frames.get(i), void_);
    }
    if (n > 0) {
      if (body == null) {
        c.write(frames.get(n - 1), void_);
      } else {
        Body b = body;
        c.write(frames.get(n - 1)).addListener(f -> b.release());
      }
    } else if (body != null) {
      body.release();
    }
    unflushed = true;
    unflushedCall = true;
    if (!batching()) {
      flushIfNeeded();
    }
  }

  /**
   * Any thread: runs {@code write} on the event loop (now, when called there). From another thread it
   * joins the writes waiting for the event loop: one task runs them all and flushes once, so concurrent
   * callers cost one wake-up of the event loop and one system call per batch rather than per message.
   * When the event loop is gone, {@link LoopWrite#rejected} runs instead (on this thread).
   */
  void writeSoon(LoopWrite write) {
    ChannelHandlerContext c = ctx;
    EventLoop loop = c.channel().eventLoop();
    if (loop.inEventLoop()) {
      write.write();
      return;
    }
    queued.add(write);
    if (drainScheduled.compareAndSet(false, true)) {
      try {
        loop.execute(drain);
      } catch (RejectedExecutionException e) {
        rejectQueued();
      }
    }
  }

  /** Event loop: runs the writes handed over, then flushes once. */
  private void drain() {
    draining = true;
    try {
      while (true) {
        LoopWrite w;
        while ((w = queued.poll()) != null) {
          w.write();
        }
        drainScheduled.set(false);
        // a write added after the last poll saw the drain scheduled: take it in this batch
        if (queued.isEmpty() || !drainScheduled.compareAndSet(false, true)) {
          break;
        }
      }
    } finally {
      draining = false;
    }
    if (!reading) {
      flushIfNeeded();
    }
  }

  /** The event loop refused the drain: every write waiting is told, and none is lost to a race. */
  private void rejectQueued() {
    while (true) {
      LoopWrite w;
      while ((w = queued.poll()) != null) {
        w.rejected();
      }
      drainScheduled.set(false);
      if (queued.isEmpty() || !drainScheduled.compareAndSet(false, true)) {
        return;
      }
    }
  }

  /** Releases frames that will not be written (those still referenced) and {@code body}, if any. */
  static void releaseAll(List<ByteBuf> frames, Body body) {
    for (ByteBuf b : frames) {
      if (b.refCnt() > 0) {
        b.release();
      }
    }
    if (body != null) {
      body.release();
    }
  }

  /** Event loop: runs {@code task} on the event loop after {@code nanos}. */
  ScheduledFuture<?> schedule(Runnable task, long nanos) {
    return ctx.executor().schedule(task, nanos, TimeUnit.NANOSECONDS);
  }

  /** The event loop's clock, in nanoseconds (a test's embedded loop may move it by hand). */
  long nanoTime() {
    return ctx.executor().ticker().nanoTime();
  }

  /** Whether the caller runs on the channel's event loop. */
  boolean inEventLoop() {
    return ctx.channel().eventLoop().inEventLoop();
  }

  /** Runs {@code task} on the event loop (now when already there); {@code rejected} when the loop is gone. */
  void runOnLoop(Runnable task, Runnable rejected) {
    EventLoop loop = ctx.channel().eventLoop();
    if (loop.inEventLoop()) {
      task.run();
      return;
    }
    try {
      loop.execute(task);
    } catch (RejectedExecutionException e) {
      rejected.run();
    }
  }
}
