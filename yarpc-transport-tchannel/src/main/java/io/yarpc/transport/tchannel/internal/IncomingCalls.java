package io.yarpc.transport.tchannel.internal;

import io.netty.buffer.ByteBuf;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.DeadlinePolicy;
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
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The calls the peer sends on one {@link Connection}: assembles each call req message from its frames,
 * hands it to the host's router, and answers with the handler's response (call res frames) or an error
 * frame. Enforces the per-message rules: a ttl of 0 is a bad request ("timeout required"), a message id
 * already in use is a bad request, more than {@link Settings#maxInFlightCalls()} calls being received or
 * handled is busy. A cancel frame cancels the handler's future and is answered with a cancelled error; the
 * later frames of a message that was ended early are ignored (the last {@value #MAX_DISCARDED_IDS} ids
 * are remembered).
 *
 * <p>Threads: every method runs on the connection's event loop, except the handler-completion path, which
 * encodes the response on whatever thread completes the handler's future and then writes it from the
 * event loop. Handlers are invoked on the event loop (the dispatcher's handlers hop to their executor).
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
  private final ConnectionHost host;
  private final Object owner;
  private final Map<Integer, ServerCall> calls = new HashMap<>();
  private final LinkedHashSet<Integer> discarding = new LinkedHashSet<>();

  /**
   * The inbound calls of one connection.
   *
   * @param out where answers go
   * @param settings the limits
   * @param host gives the router that serves the calls
   * @param owner the connection, for log messages
   */
  IncomingCalls(FrameOutput out, Settings settings, ConnectionHost host, Object owner) {
    this.out = out;
    this.settings = settings;
    this.host = host;
    this.owner = owner;
  }

  /** A call the peer sent: being received, then being handled. Event loop only, except where noted. */
  private static final class ServerCall {
    final int id;
    final byte[] tracing;
    final String service;
    final Map<String, String> transportHeaders;
    final long ttl;
    final MessageAssembler assembler;
    CompletableFuture<Response> future;
    volatile boolean cancelled;

    ServerCall(CallFrame f, long maxBytes) {
      this.id = f.id();
      this.tracing = f.tracing();
      this.service = f.service();
      this.transportHeaders = f.headers();
      this.ttl = f.ttl();
      this.assembler = new MessageAssembler(true, f.checksumType(), maxBytes);
    }

    String argScheme() {
      String as = transportHeaders.get(TransportHeaders.ARG_SCHEME);
      return as == null ? "" : as;
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

  /**
   * A call req frame.
   *
   * @throws ProtocolException when the frame cannot be parsed (fatal), the connection is busy, or the call
   *     breaks a message rule; the caller then {@linkplain #endMessage ends the message}
   */
  void onCallReq(ByteBuf frame, int id) throws ProtocolException {
    discarding.remove(id);
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
    if (calls.size() >= settings.maxInFlightCalls()) {
      throw ProtocolException.of(
          ErrorCodes.BUSY,
          "too many in-flight calls on this connection (the limit is "
              + settings.maxInFlightCalls()
              + ")");
    }
    if (f.ttl() == 0) {
      throw ProtocolException.badRequest("timeout required");
    }
    ServerCall call = new ServerCall(f, settings.maxMessageBytes());
    calls.put(id, call);
    if (call.assembler.add(f)) {
      dispatch(call);
    }
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
        c.assembler.release();
      }
    }
    calls.clear();
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

  private void sendError(int id, int errorCode, byte[] tracing, String message) {
    out.writeAndFlush(Frames.error(out.alloc(), id, errorCode, tracing, message));
  }

  private void dispatch(ServerCall call) {
    MessageAssembler a = call.assembler;
    RequestMeta meta;
    Body body;
    try {
      meta =
          CallCodec.decodeRequestMeta(
              call.service, call.transportHeaders, call.ttl, a.argBytes(0), a.argBytes(1));
    } catch (YarpcException e) {
      calls.remove(call.id);
      a.release();
      sendError(call.id, ErrorCodes.fromCode(e.code()), call.tracing, e.getMessage());
      return;
    }
    body = a.takeBody(out.channel().alloc());
    a.release();
    CompletableFuture<Response> future;
    try {
      Router router = host.router();
      if (router == null) {
        throw YarpcException.of(
            Code.UNAVAILABLE, "no tchannel inbound serves calls on this connection");
      }
      // every call req carries a TTL (0 is refused above), so yarpc-go's strict rule is the policy
      // here
      InboundCalls.Routed routed =
          InboundCalls.route(router, meta, "tchannel", HANDLED, DeadlinePolicy.strict());
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
    List<ByteBuf> frames;
    Body toRelease = null;
    try {
      if (error == null) {
        toRelease = response.body();
        frames = encodeResponse(call, response, null);
      } else {
        YarpcException e = YarpcException.from(error);
        Response attached = e.response();
        if (attached != null && attached.isApplicationError()) {
          toRelease = attached.body();
          frames = encodeResponse(call, attached, e);
        } else {
          if (attached != null) {
            attached.body().release();
          }
          frames =
              List.of(
                  Frames.error(
                      out.alloc(),
                      call.id,
                      ErrorCodes.fromCode(e.code()),
                      call.tracing,
                      e.getMessage()));
        }
      }
    } catch (IOException | RuntimeException e) {
      if (toRelease != null) {
        toRelease.release();
        toRelease = null;
      }
      YarpcException y =
          e instanceof YarpcException
              ? (YarpcException) e
              : YarpcException.of(
                  Code.INTERNAL, "failed to write the response: %s", YarpcException.describe(e));
      frames =
          List.of(
              Frames.error(
                  out.alloc(),
                  call.id,
                  ErrorCodes.fromCode(y.code()),
                  call.tracing,
                  y.getMessage()));
    }
    List<ByteBuf> toWrite = frames;
    Body body = toRelease;
    out.runOnLoop(
        () -> {
          if (calls.get(call.id) != call || call.cancelled || !out.isOpen()) {
            FrameOutput.releaseAll(toWrite, body);
            return;
          }
          calls.remove(call.id);
          out.writeMessage(toWrite, body);
        },
        () -> FrameOutput.releaseAll(toWrite, body));
  }

  private List<ByteBuf> encodeResponse(ServerCall call, Response response, YarpcException error)
      throws IOException {
    Map<String, String> headers = CallCodec.responseHeaders(call.service, response, error);
    int code = response.isApplicationError() || error != null ? 1 : 0;
    return CallCodec.encodeResponse(
        out.alloc(),
        call.id,
        call.tracing,
        call.argScheme(),
        call.responseChecksum(),
        code,
        headers,
        response.body(),
        settings.maxFrameSize());
  }
}
