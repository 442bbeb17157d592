package io.yarpc.transport.tchannel.internal;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.util.collection.IntObjectHashMap;
import io.netty.util.collection.IntObjectMap;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.netty.internal.Connections;
import io.yarpc.netty.internal.IoErrors;
import io.yarpc.transport.Body;
import io.yarpc.transport.ConnectionInfo;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.InboundCalls;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.Router;
import io.yarpc.transport.RpcType;
import io.yarpc.transport.tchannel.ChecksumType;
import java.io.IOException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The calls the peer sends on one {@link Connection}: assembles each call req message from its frames,
 * hands it to the host's router, and answers with the handler's response (call res frames) or an error
 * frame. Enforces the per-message rules and the {@link ConnectionLimits}: a ttl of 0 is a bad request
 * ("timeout required") unless the deadline policy gives such calls a default timeout, a message id
 * already in use is a bad request, more than {@link ConnectionLimits#maxInFlightCalls()} calls being
 * received or handled is busy, and so is a message over {@link ConnectionLimits#maxRequestBytes()}; an
 * arg2 over {@link ConnectionLimits#maxHeaderBytes()} or more than {@link
 * ConnectionLimits#maxHeaderCount()} headers is a bad request, found before arg2 is decoded. A message
 * still arriving when its deadline (the ttl, from the first frame's arrival, as the deadline policy
 * bounds it) or the read timeout passes, whichever comes first, ends with a timeout error frame and its
 * chunks are released. A cancel frame cancels the handler's future and is answered with a cancelled
 * error; the later frames of a message that was ended early are ignored (the last {@value
 * #MAX_DISCARDED_IDS} ids are remembered). The chunks of messages being assembled are counted in a
 * {@link PendingBytes}, from which the connection decides whether to keep reading.
 *
 * <p>Threads: every method runs on the connection's event loop, except the handler-completion path, which
 * encodes the response's headers on whatever thread completes the handler's future; the event loop cuts
 * the frames around the body and writes them ({@link FrameOutput#writeSoon}: at once when the handler
 * completed there, as a non-blocking procedure's does, with one flush per read). Handlers are invoked on
 * the event loop (the dispatcher's handlers hop to their executor unless the procedure is non-blocking).
 *
 * <p>Buffers: the frames passed in stay the caller's (arg chunks are kept as retained slices in a {@link
 * MessageAssembler}, which is released exactly once: when the message is dispatched, ended or cancelled,
 * or the connection closes). A complete message's arg3 becomes a {@link Body} owned by the handler
 * invocation; when no handler gets it, this class releases it. The response body (or the body attached to
 * the handler's exception) is released once its frames are written or when they cannot be.
 */
final class IncomingCalls {
  /** TChannel carries unary calls only, as in yarpc-go. */
  private static final Set<RpcType> HANDLED = EnumSet.of(RpcType.UNARY);

  private static final Logger log =
      LoggerFactory.getLogger(Connection.class); // the connection's log
  private static final int MAX_DISCARDED_IDS = 4096;

  private final FrameOutput out;
  private final Settings settings;
  private final ConnectionLimits limits;
  private final ConnectionHost host;
  private final Object owner;
  private final PendingBytes pending;
  private final IntObjectMap<ServerCall> calls = new IntObjectHashMap<>();
  private final LinkedHashSet<Integer> discarding = new LinkedHashSet<>();
  private final LinkedHashSet<ServerCall> arriving = new LinkedHashSet<>(); // oldest first
  private Runnable expired = () -> {};

  /**
   * The inbound calls of one connection.
   *
   * @param out where answers go
   * @param settings the largest frame written
   * @param host gives the router that serves the calls and the limits
   * @param owner the connection, for log messages
   */
  IncomingCalls(FrameOutput out, Settings settings, ConnectionHost host, Object owner) {
    this.out = out;
    this.settings = settings;
    this.limits = host.limits();
    this.host = host;
    this.owner = owner;
    this.pending = new PendingBytes(limits.pendingBudget());
  }

  /** Runs {@code task} (on the event loop) after a message still arriving was ended by its timer. */
  void onExpired(Runnable task) {
    this.expired = task;
  }

  /**
   * A call the peer sent: being received, then being handled, then its answer written. Event loop only,
   * except where noted.
   */
  private final class ServerCall implements FrameOutput.LoopWrite {
    final int id;
    final byte[] tracing;
    final String service;
    final Map<String, String> transportHeaders;
    final long ttl;
    final Deadline received; // the ttl from the first frame's arrival; null for a ttl of 0
    final MessageAssembler assembler;
    ScheduledFuture<?> expiry; // while the message is still arriving
    CompletableFuture<Response> future;
    volatile boolean cancelled;
    // the answer, from the thread that completed the handler to the event loop (through the queue):
    // a call res to cut into frames around its body, or an error frame
    private CallCodec.Message answer;
    private Body answerBody;
    private ByteBuf answerError;

    ServerCall(CallFrame f, ConnectionLimits limits, PendingBytes pending) {
      this.id = f.id();
      this.tracing = f.tracing();
      this.service = f.service();
      this.transportHeaders = f.headers();
      this.ttl = f.ttl();
      this.received = f.ttl() == 0 ? null : Deadline.after(f.ttl(), TimeUnit.MILLISECONDS);
      this.assembler =
          new MessageAssembler(
              true, f.checksumType(), limits.maxRequestBytes(), limits.maxHeaderBytes(), pending);
    }

    /** The message is no longer arriving (complete, ended or dropped): its timer stops. */
    void stopExpiry() {
      if (expiry != null) {
        expiry.cancel(false);
        expiry = null;
      }
    }

    String argScheme() {
      String as = transportHeaders.get(TransportHeaders.ARG_SCHEME);
      return as == null ? "" : as;
    }

    /** Event loop: writes the answer unless the call ended meanwhile. */
    @Override
    public void write() {
      CallCodec.Message message = answer;
      Body body = answerBody;
      ByteBuf error = answerError;
      answer = null;
      answerBody = null;
      answerError = null;
      if (calls.get(id) != this || cancelled || !out.isOpen()) {
        releaseAnswer(body, error);
        return;
      }
      calls.remove(id);
      if (error == null) {
        try {
          out.writeMessage(message.frames(out.alloc(), body), body);
          return;
        } catch (IOException | RuntimeException e) {
          body.release();
          body = null;
          YarpcException y = writeFailure(e);
          error =
              Frames.error(out.alloc(), id, ErrorCodes.fromCode(y.code()), tracing, y.getMessage());
        }
      }
      out.writeMessage(List.of(error), body);
    }

    @Override
    public void rejected() {
      releaseAnswer(answerBody, answerError);
    }

    private void releaseAnswer(Body body, ByteBuf error) {
      if (body != null) {
        body.release();
      }
      if (error != null) {
        error.release();
      }
    }

    /** Responses reuse the request's checksum type; farmhash is answered with none. */
    ChecksumType responseChecksum() {
      ChecksumType t = assembler.checksumType();
      return t == ChecksumType.FARMHASH ? ChecksumType.NONE : t;
    }
  }

  /** How many calls are being received or handled. */
  int size() {
    return calls.size();
  }

  /** How many call req messages are still arriving. */
  int assembling() {
    return arriving.size();
  }

  /** The oldest call req message still arriving (an opaque token), or null when none is. */
  Object oldestArriving() {
    return arriving.isEmpty() ? null : arriving.iterator().next();
  }

  /** Whether {@code message}, a token from {@link #oldestArriving}, is still arriving. */
  boolean isArriving(Object message) {
    return message instanceof ServerCall c && arriving.contains(c);
  }

  /**
   * The budgets while messages interleave on the socket: the connection keeps reading so that its oldest
   * message still arriving can always complete, whatever it holds. The others together may hold up to
   * the connection's budget ({@link ConnectionLimits#maxPendingBytes}; what the oldest holds does not
   * count), and nothing while the inbound's shared budget is exhausted (the connection is then read only
   * to finish its oldest message, or for what one socket read brought): a frame of another message past
   * either ends that message with busy. So a connection holds at most about its budget plus one request,
   * and the shared total overshoots by about one request and one socket read per connection.
   */
  private void checkHeldByOthers(int id) throws ProtocolException {
    if (arriving.isEmpty()) {
      return; // the message is the oldest
    }
    ServerCall oldest = arriving.iterator().next();
    if (oldest.id == id) {
      return;
    }
    if (pending.held() - oldest.assembler.size() >= limits.maxPendingBytes()) {
      throw ProtocolException.of(
          ErrorCodes.BUSY,
          "too many bytes held for call messages still arriving on this connection (the limit is "
              + limits.maxPendingBytes()
              + ")");
    }
    if (pending.budget().exhausted()) {
      throw ProtocolException.of(
          ErrorCodes.BUSY,
          "too many bytes held for call messages still arriving on this server (the limit is "
              + pending.budget().max()
              + ")");
    }
  }

  /** The memory held for the messages still arriving. */
  PendingBytes pending() {
    return pending;
  }

  /**
   * A call req frame.
   *
   * @throws ProtocolException when the frame cannot be parsed (fatal), the connection is busy, or the call
   *     breaks a message rule; the caller then {@linkplain #endMessage ends the message}
   */
  void onCallReq(ByteBuf frame, int id) throws ProtocolException {
    if (!discarding.isEmpty()) {
      discarding.remove(id);
    }
    ServerCall existing = calls.get(id);
    if (existing != null) {
      String message = "message id " + Frames.idString(id) + " is already in use";
      if (existing.future == null) {
        // the first message is still arriving: its fragments and the duplicate's can no longer be
        // told apart, so it ends too (one error frame answers both) and later fragments of the id
        // are ignored
        endMessage(id, Frames.moreFragments(frame), ErrorCodes.BAD_REQUEST, message);
      } else {
        sendError(id, ErrorCodes.BAD_REQUEST, null, message);
      }
      return;
    }
    CallFrame f = CallFrame.parse(frame);
    if (calls.size() >= limits.maxInFlightCalls()) {
      throw ProtocolException.of(
          ErrorCodes.BUSY,
          "too many in-flight calls on this connection (the limit is "
              + limits.maxInFlightCalls()
              + ")");
    }
    if (f.ttl() == 0 && limits.deadlinePolicy().defaultTimeout() == null) {
      throw ProtocolException.badRequest("timeout required");
    }
    if (Frames.moreFragments(frame)) {
      checkHeldByOthers(id);
    }
    ServerCall call = new ServerCall(f, limits, pending);
    calls.put(id, call);
    if (f.moreFragments()) {
      arriving.add(call); // a message complete in its first frame is dispatched below at once
    }
    if (call.assembler.add(f)) {
      dispatch(call);
    } else {
      armExpiry(call);
    }
  }

  /**
   * A message that did not arrive in its first frame must be complete by its deadline (as the policy
   * bounds it) or the read timeout, whichever comes first.
   */
  private void armExpiry(ServerCall call) {
    Deadline deadline = limits.deadlinePolicy().apply(call.received, RpcType.UNARY);
    long deadlineNanos = deadline == null ? Long.MAX_VALUE : Math.max(0, deadline.remainingNanos());
    long readNanos = limits.readTimeoutNanos();
    String why;
    long delay;
    if (deadlineNanos <= readNanos) {
      delay = deadlineNanos;
      why =
          "call req message "
              + Frames.idString(call.id)
              + " still incomplete at its deadline ("
              + (deadline == call.received
                  ? "ttl " + call.ttl + " ms"
                  : (deadlineNanos + 999_999) / 1_000_000 + " ms")
              + ")";
    } else {
      delay = readNanos;
      why =
          "call req message "
              + Frames.idString(call.id)
              + " still incomplete after the read timeout of "
              + TimeUnit.NANOSECONDS.toMillis(readNanos)
              + " ms";
    }
    call.expiry = out.schedule(() -> expire(call, why), delay);
  }

  /** The timer of a message still arriving: it ends with a timeout error frame. */
  private void expire(ServerCall call, String why) {
    if (calls.get(call.id) != call || call.future != null) {
      return;
    }
    call.expiry = null;
    calls.remove(call.id);
    arriving.remove(call);
    call.assembler.release();
    discard(call.id);
    sendError(call.id, ErrorCodes.TIMEOUT, call.tracing, why);
    expired.run();
  }

  /** A call req continue frame. @throws ProtocolException as {@link #onCallReq} */
  void onCallReqContinue(ByteBuf frame, int id) throws ProtocolException {
    if (discarding.contains(id)) {
      if (!Frames.moreFragments(frame)) {
        discarding.remove(id);
      }
      return;
    }
    ServerCall call = calls.get(id);
    if (call == null || call.future != null) {
      log.debug(
          "{}: ignoring a call req continue frame for message {}, which is not being received",
          owner,
          Frames.idString(id));
      return;
    }
    checkHeldByOthers(id);
    CallFrame f = CallFrame.parse(frame);
    if (call.assembler.add(f)) {
      dispatch(call);
    }
  }

  /**
   * Ends a call req that cannot be served with an error frame; its later frames are ignored. Nothing
   * happens for a call already handed to its handler.
   */
  void endMessage(int id, boolean moreFramesFollow, int errorCode, String message) {
    ServerCall call = calls.get(id);
    byte[] tracing = null;
    if (call != null && call.future == null) {
      calls.remove(id);
      arriving.remove(call);
      call.stopExpiry();
      call.assembler.release();
      tracing = call.tracing;
    } else if (call != null) {
      return; // already handled: nothing to end
    }
    if (moreFramesFollow) {
      discard(id);
    }
    sendError(id, errorCode, tracing, message);
  }

  /** A cancel frame: the call's handler is cancelled (or its partial message dropped) and answered. */
  void onCancel(int id) {
    ServerCall call = calls.remove(id);
    if (call == null) {
      return;
    }
    call.cancelled = true;
    if (call.future != null) {
      call.future.cancel(false);
    } else {
      arriving.remove(call);
      call.stopExpiry();
      call.assembler.release();
      discard(id);
    }
    sendError(id, ErrorCodes.CANCELLED, call.tracing, "request cancelled by the caller");
  }

  /** The connection closed: every running handler is cancelled, every partial message released. */
  void closeAll() {
    for (ServerCall c : new ArrayList<>(calls.values())) {
      c.cancelled = true;
      if (c.future != null) {
        c.future.cancel(false);
      } else {
        c.stopExpiry();
        c.assembler.release();
      }
    }
    calls.clear();
    arriving.clear();
    discarding.clear();
  }

  private void discard(int id) {
    if (discarding.size() >= MAX_DISCARDED_IDS) {
      Iterator<Integer> it = discarding.iterator();
      it.next();
      it.remove();
    }
    discarding.add(id);
  }

  /** The connection's addresses and TLS identity (made once per connection), or null when unknown. */
  private ConnectionInfo connectionInfo() {
    Channel ch = out.channel();
    return ch == null ? null : Connections.info(ch);
  }

  private void sendError(int id, int errorCode, byte[] tracing, String message) {
    out.writeAnswer(Frames.error(out.alloc(), id, errorCode, tracing, message));
  }

  private void dispatch(ServerCall call) {
    arriving.remove(call);
    call.stopExpiry();
    MessageAssembler a = call.assembler;
    RequestMeta meta;
    Body body;
    try {
      meta =
          CallCodec.decodeRequestMeta(
              call.service,
              call.transportHeaders,
              call.received,
              a.argBytes(0),
              a.argBytes(1),
              limits.maxHeaderCount(),
              connectionInfo());
    } catch (YarpcException e) {
      calls.remove(call.id);
      a.release();
      sendError(call.id, ErrorCodes.fromCode(e.code()), call.tracing, e.getMessage());
      return;
    }
    body = a.takeBody();
    a.release();
    CompletableFuture<Response> future;
    try {
      Router router = host.router();
      if (router == null) {
        throw YarpcException.of(
            Code.UNAVAILABLE, "no tchannel inbound serves calls on this connection");
      }
      // a ttl of 0 was refused above unless the policy gives such calls a default timeout
      InboundCalls.Routed routed =
          InboundCalls.route(router, meta, "tchannel", HANDLED, limits.deadlinePolicy());
      future =
          InboundCalls.handle(
              routed.spec().unary(), Request.of(routed.meta(), body), body::release);
    } catch (Throwable t) {
      body.release();
      future = CompletableFuture.failedFuture(t);
    }
    call.future = future;
    future.whenComplete((response, error) -> onHandlerDone(call, response, error));
  }

  /** Encodes the handler's outcome (any thread) and writes it from the event loop. */
  private void onHandlerDone(ServerCall call, Response response, Throwable error) {
    if (call.cancelled) {
      if (response != null) {
        response.body().release();
      } else if (error != null) {
        YarpcException.releaseResponse(error);
      }
      return;
    }
    CallCodec.Message message = null;
    ByteBuf errorFrame = null;
    Body toRelease = null;
    try {
      if (error == null) {
        toRelease = response.body();
        message = responseMessage(call, response, null);
      } else {
        YarpcException e = YarpcException.from(error);
        Response attached = e.response();
        if (attached != null && attached.isApplicationError()) {
          if (attached.body().length() == 0 && e.details() != null) {
            // TChannel has no place for an error's details but the reply's body: an application
            // error without a body of its own carries them there (ClientErrors reads them back)
            attached.body().release();
            attached = attached.toBuilder().body(Body.of(e.details())).build();
          }
          toRelease = attached.body();
          message = responseMessage(call, attached, e);
        } else {
          if (attached != null) {
            attached.body().release();
          }
          errorFrame =
              Frames.error(
                  out.alloc(),
                  call.id,
                  ErrorCodes.fromCode(e.code()),
                  call.tracing,
                  e.getMessage());
        }
      }
    } catch (RuntimeException e) {
      if (toRelease != null) {
        toRelease.release();
        toRelease = null;
      }
      YarpcException y = writeFailure(e);
      errorFrame =
          Frames.error(
              out.alloc(), call.id, ErrorCodes.fromCode(y.code()), call.tracing, y.getMessage());
    }
    call.answer = message;
    call.answerBody = toRelease;
    call.answerError = errorFrame;
    out.writeSoon(call);
  }

  /** The call res for {@code response}, but for its body (cut into frames on the event loop). */
  private CallCodec.Message responseMessage(
      ServerCall call, Response response, YarpcException error) {
    Map<String, String> headers = CallCodec.responseHeaders(call.service, response, error);
    int code = response.isApplicationError() || error != null ? 1 : 0;
    return CallCodec.responseMessage(
        call.id,
        call.tracing,
        call.argScheme(),
        call.responseChecksum(),
        code,
        headers,
        settings.maxFrameSize());
  }

  /** Why a response could not be written: its own error, or {@code internal}. */
  private static YarpcException writeFailure(Exception e) {
    return e instanceof YarpcException y
        ? y
        : YarpcException.of(
            Code.INTERNAL, "failed to write the response: %s", IoErrors.describe(e));
  }
}
