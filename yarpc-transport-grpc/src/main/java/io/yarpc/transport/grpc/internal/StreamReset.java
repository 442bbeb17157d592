package io.yarpc.transport.grpc.internal;

import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.ServerStreamTracer;
import io.grpc.Status;

/**
 * One server stream as the inbound's limits see it, from grpc-java's stream tracer (one per stream, made
 * when its headers arrive): it can reset the stream, and it knows whether a request message is being
 * received.
 *
 * <ul>
 *   <li><b>Reset.</b> {@code ServerCall} has no method for it (its {@code close} sends trailers, and those
 *       wait behind response data the client does not read). grpc-java's server resets a stream when the
 *       call's {@link Context} is cancelled with a {@code DEADLINE_EXCEEDED} cause, as at an expired
 *       deadline: {@code RST_STREAM(CANCEL)} to the client, the call's listener cancelled, the stream's
 *       queued and received buffers released. The context a call runs in cannot be cancelled from the call
 *       (grpc-java exposes an uncancellable view of it), so this tracer makes every call's context a child
 *       of a cancellable context of its own; cancelling it cancels the call's. {@code startCall} finds the
 *       tracer of its call with {@link #ofCall}: the tracer knows the call's request {@link Metadata} (the
 *       object grpc-java hands to the tracer factory and then to {@code startCall}). On a server with a
 *       direct executor grpc-java makes the tracer and starts the call on one thread, one call at a
 *       time, so the tracer waits in a per-thread slot ({@link #directTracers()}: no context value, no
 *       allocation); with an executor of its own it is a value in the call's context ({@link
 *       #tracers()}).
 *   <li><b>A message being received.</b> grpc-java's deframer reports a message once it read its 5-byte
 *       prefix ({@code inboundMessage}) and again once all of it arrived ({@code inboundMessageRead});
 *       in between, the bytes it consumed are held for the call (and their flow-control credit already
 *       returned). {@link #messageSince()} tells since when.
 * </ul>
 *
 * <p>Thread-safe: grpc-java reports messages on the transport's thread; resets come from any thread and do
 * nothing once the call is over.
 */
final class StreamReset extends ServerStreamTracer {
  private static final StreamReset NONE = new StreamReset(null, false);
  private static final Context.Key<StreamReset> KEY = Context.key("yarpc-stream-reset");

  /** The tracer made last on this thread, until its call starts (direct executors only). */
  private static final ThreadLocal<StreamReset> MADE_HERE = new ThreadLocal<>();

  private static final ServerStreamTracer.Factory TRACERS = factory(false);
  private static final ServerStreamTracer.Factory DIRECT_TRACERS = factory(true);

  private final Metadata headers; // the call's request headers, by identity
  private final boolean direct;
  private volatile Context.CancellableContext context; // set before the call starts; null: none
  private volatile long messageSince; // System.nanoTime() when a message began; 0: none

  private StreamReset(Metadata headers, boolean direct) {
    this.headers = headers;
    this.direct = direct;
  }

  private static ServerStreamTracer.Factory factory(boolean direct) {
    return new ServerStreamTracer.Factory() {
      @Override
      public ServerStreamTracer newServerStreamTracer(String fullMethodName, Metadata headers) {
        StreamReset s = new StreamReset(headers, direct);
        if (direct) {
          MADE_HERE.set(s);
        }
        return s;
      }
    };
  }

  /**
   * The stream tracer factory that makes calls resettable, for a server that runs call events on an
   * executor of its own.
   */
  static ServerStreamTracer.Factory tracers() {
    return TRACERS;
  }

  /**
   * The stream tracer factory that makes calls resettable, for a server with a direct executor (which
   * starts each call on the transport thread that made its tracer).
   */
  static ServerStreamTracer.Factory directTracers() {
    return DIRECT_TRACERS;
  }

  /**
   * The stream of the call whose {@code startCall} runs now with request {@code headers}; a stream that
   * cannot be reset when none is known (a server without these tracers).
   */
  static StreamReset ofCall(Metadata headers) {
    StreamReset s = MADE_HERE.get();
    if (s != null && s.headers == headers) {
      MADE_HERE.set(null);
      return s;
    }
    s = KEY.get(); // tracers(): grpc-java runs startCall in the call's context
    return s != null && s.headers == headers ? s : NONE;
  }

  @Override
  public Context filterContext(Context base) {
    Context.CancellableContext c = base.withCancellation();
    context = c;
    return direct ? c : c.withValue(KEY, this);
  }

  @Override
  public void streamClosed(Status status) {
    // a stream that ended before its call started (a health or reflection call, a refused one)
    // leaves
    // the slot of the transport thread, which grpc-java closes it on
    if (direct && MADE_HERE.get() == this) {
      MADE_HERE.set(null);
    }
  }

  @Override
  public void serverCallStarted(ServerCallInfo<?, ?> callInfo) {
    // nothing to learn; overridden so that grpc-java does not wrap callInfo for the deprecated
    // method
  }

  @Override
  public void inboundMessage(int seqNo) {
    long now = System.nanoTime();
    messageSince = now == 0 ? 1 : now;
  }

  @Override
  public void inboundMessageRead(int seqNo, long optionalWireSize, long optionalUncompressedSize) {
    messageSince = 0;
  }

  /**
   * When the request message being received began ({@link System#nanoTime()}), or 0 when none is: no
   * message asked for, or the last one complete.
   */
  long messageSince() {
    return messageSince;
  }

  /** Resets the stream; {@code why} is what the call's listener sees. */
  void reset(String why) {
    Context.CancellableContext c = context;
    if (c != null) {
      c.cancel(Status.DEADLINE_EXCEEDED.withDescription(why).asRuntimeException());
    }
  }
}
