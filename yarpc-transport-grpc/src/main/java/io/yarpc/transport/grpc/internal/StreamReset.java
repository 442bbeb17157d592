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
 *       of a cancellable context of its own, and {@code startCall} finds the tracer in its context ({@link
 *       #ofCurrentCall()}); cancelling the tracer's context cancels the call's.
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
  private static final StreamReset NONE = new StreamReset();
  private static final Context.Key<StreamReset> KEY = Context.key("yarpc-stream-reset");

  private static final ServerStreamTracer.Factory TRACERS =
      new ServerStreamTracer.Factory() {
        @Override
        public ServerStreamTracer newServerStreamTracer(String fullMethodName, Metadata headers) {
          return new StreamReset();
        }
      };

  private volatile Context.CancellableContext context; // set before the call starts; null: none
  private volatile long messageSince; // System.nanoTime() when a message began; 0: none

  private StreamReset() {}

  /** The server's stream tracer factory that makes calls resettable. */
  static ServerStreamTracer.Factory tracers() {
    return TRACERS;
  }

  /** The stream of the call whose {@code startCall} runs now (grpc-java runs it in its context). */
  static StreamReset ofCurrentCall() {
    StreamReset s = KEY.get();
    return s == null ? NONE : s;
  }

  @Override
  public Context filterContext(Context base) {
    Context.CancellableContext c = base.withCancellation();
    context = c;
    return c.withValue(KEY, this);
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
