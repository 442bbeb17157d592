package io.yarpc.transport.tchannel.internal;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoop;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.GoDurations;
import io.yarpc.transport.Body;
import io.yarpc.transport.HandlerSpec;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.Router;
import io.yarpc.transport.RpcType;
import io.yarpc.transport.tchannel.ChecksumType;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One TChannel connection, in either role, and the Netty handler that runs it. After the init handshake
 * the connection is symmetric: it sends calls for this side's outbounds (multiplexed by message id) and
 * serves the peer's calls through its host's router, on the same socket.
 *
 * <h2>Threads</h2>
 *
 * All state changes happen on the channel's event loop. {@link #call} may be invoked from any thread: it
 * encodes the request frames on the calling thread and hands them to the event loop. Handlers are called
 * on the event loop through the router (the dispatcher's handlers hop to their executor themselves);
 * responses are encoded on whatever thread completes the handler's future and written from the event loop.
 * Client futures complete on the event loop: chain blocking work with the {@code ...Async} methods.
 *
 * <h2>Buffers</h2>
 *
 * Every frame read is released once handled; arg chunks live on as retained slices in a {@link
 * MessageAssembler} until the message is complete, then arg3 becomes a {@link Body} owned by the handler
 * invocation (requests) or the caller (responses). The bodies this side sends are released once their
 * frames have been written (or could not be). On close every partial message is released, every pending
 * call fails with {@code unavailable} at once, and every running handler is cancelled.
 *
 * <h2>Bad input</h2>
 *
 * Nothing a peer sends makes an exception escape: a {@link ProtocolException} ends the message with an
 * error frame (bad request, busy, cancelled...) or, when fatal, sends a {@link ErrorCodes#FATAL} error frame
 * and closes the connection. Fatal: an impossible frame size, an unknown frame type, a frame before or a
 * second init frame after the handshake, an init frame without {@code host_port} or {@code process_name} or
 * with a version other than 2, and a call frame whose fields cannot be parsed (truncated fields, an empty,
 * repeated or over-long transport header key, more than 128 transport headers, an unknown checksum type).
 * Per message, connection kept: bad request for ttl 0 ("timeout required"), a fragmented arg1, a last frame
 * before arg3, more than three args, a checksum mismatch or change, a message over the size limit, a
 * duplicate message id; busy when the connection already has the most in-flight calls allowed.
 */
public final class Connection extends ChannelDuplexHandler {
  private static final Logger log = LoggerFactory.getLogger(Connection.class);
  private static final int MAX_DISCARDED_IDS = 4096;
  private static final java.util.concurrent.atomic.AtomicLong UNEXPECTED_FAILURES =
      new java.util.concurrent.atomic.AtomicLong();

  private enum State { AWAIT_INIT_REQ, AWAIT_INIT_RES, ACTIVE, CLOSED }

  private final boolean initiator;
  private final ConnectionHost host;
  private final Settings settings;
  private final ByteBufAllocator alloc;
  private final CompletableFuture<Connection> handshake = new CompletableFuture<>();
  private final AtomicInteger nextId = new AtomicInteger(1);
  private final ConcurrentHashMap<Integer, ClientCall> clientCalls = new ConcurrentHashMap<>();
  private final Map<Integer, ServerCall> serverCalls = new HashMap<>(); // event loop only
  private final LinkedHashSet<Integer> discarding = new LinkedHashSet<>(); // event loop only
  private ChannelHandlerContext ctx;
  private volatile Channel channel;
  private volatile State state;
  private volatile String remoteHostPort = "";
  private io.netty.util.concurrent.ScheduledFuture<?> handshakeTimer;
  private boolean closeNotified; // event loop only

  /**
   * A connection handler.
   *
   * @param initiator true for a connection this side dialled (it sends init req), false for an accepted one
   */
  public Connection(boolean initiator, ConnectionHost host) {
    this.initiator = initiator;
    this.host = host;
    this.settings = host.settings();
    this.alloc = settings.writeAllocator();
    this.state = initiator ? State.AWAIT_INIT_RES : State.AWAIT_INIT_REQ;
  }

  // ---------------------------------------------------------------------------------------------------
  // Accessors

  /** Completes when the handshake is done; fails when the connection closes before. */
  public CompletableFuture<Connection> handshakeFuture() {
    return handshake;
  }

  /** Whether the handshake is done and the connection still open. */
  public boolean isActive() {
    Channel ch = channel;
    return state == State.ACTIVE && ch != null && ch.isActive();
  }

  /** The channel (null before the handler is added). */
  public Channel channel() {
    return channel;
  }

  /** The peer's advertised {@code host_port} (empty before the handshake). */
  public String remoteHostPort() {
    return remoteHostPort;
  }

  /** Whether this side dialled the connection. */
  public boolean isInitiator() {
    return initiator;
  }

  /**
   * How many times, in this JVM, a connection met an exception that no protocol rule explains (a bug: the
   * connection was closed with a fatal error frame). For tests and monitoring; should stay 0.
   */
  public static long unexpectedFailures() {
    return UNEXPECTED_FAILURES.get();
  }

  /** Closes the connection; pending calls fail with {@code unavailable}. */
  public void close() {
    Channel ch = channel;
    if (ch != null) {
      ch.close();
    }
  }

  @Override
  public String toString() {
    Channel ch = channel;
    return "tchannel connection " + (ch == null ? "" : ch.localAddress() + (initiator ? " -> " : " <- ")
        + ch.remoteAddress());
  }

  // ---------------------------------------------------------------------------------------------------
  // Channel events

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
    this.channel = ctx.channel();
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    handshakeTimer = ctx.executor().schedule(() -> {
      if (state != State.ACTIVE && state != State.CLOSED) {
        handshake.completeExceptionally(YarpcException.of(Code.UNAVAILABLE,
            "tchannel handshake with %s timed out", ctx.channel().remoteAddress()));
        ctx.close();
      }
    }, settings.handshakeTimeoutNanos(), TimeUnit.NANOSECONDS);
    if (initiator) {
      ctx.writeAndFlush(InitFrames.encode(alloc, Frames.INIT_REQ, nextId.getAndIncrement(), initHeaders()));
    }
    ctx.fireChannelActive();
  }

  private Map<String, String> initHeaders() {
    Map<String, String> h = new LinkedHashMap<>();
    h.put(InitFrames.HOST_PORT, host.localHostPort());
    h.put(InitFrames.PROCESS_NAME, settings.processName());
    h.put(InitFrames.LANGUAGE, "java");
    h.put(InitFrames.LANGUAGE_VERSION, System.getProperty("java.version", "unknown"));
    h.put(InitFrames.TCHANNEL_VERSION, Versions.LIBRARY);
    return h;
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    state = State.CLOSED;
    if (handshakeTimer != null) {
      handshakeTimer.cancel(false);
    }
    handshake.completeExceptionally(YarpcException.of(Code.UNAVAILABLE,
        "tchannel connection to %s closed before its handshake completed", ctx.channel().remoteAddress()));
    String why = "tchannel connection to " + peerName() + " closed";
    for (ClientCall c : new ArrayList<>(clientCalls.values())) {
      failClientCall(c, YarpcException.of(Code.UNAVAILABLE, "%s", why));
    }
    for (ServerCall c : new ArrayList<>(serverCalls.values())) {
      c.cancelled = true;
      if (c.future != null) {
        c.future.cancel(false);
      } else {
        c.assembler.release();
      }
    }
    serverCalls.clear();
    discarding.clear();
    if (!closeNotified) {
      closeNotified = true;
      try {
        host.onClose(this);
      } catch (RuntimeException e) {
        log.warn("error while closing {}", this, e);
      }
    }
    ctx.fireChannelInactive();
  }

  private String peerName() {
    String hp = remoteHostPort;
    Channel ch = channel;
    return hp.isEmpty() || hp.equals(InitFrames.EPHEMERAL_HOST_PORT)
        ? String.valueOf(ch == null ? "peer" : ch.remoteAddress()) : hp;
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    if (!(cause instanceof IOException)) {
      UNEXPECTED_FAILURES.incrementAndGet();
    }
    log.debug("{} failed; closing it", this, cause);
    ctx.close();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (msg instanceof FrameDecoder.BadFrameSize bad) {
      fatal(Frames.NULL_ID, "invalid frame size " + bad.size());
      return;
    }
    if (!(msg instanceof ByteBuf frame)) {
      io.netty.util.ReferenceCountUtil.release(msg);
      return;
    }
    try {
      if (state != State.CLOSED) {
        onFrame(frame);
      }
    } catch (ProtocolException e) {
      onProtocolError(frame, e);
    } catch (RuntimeException | Error e) {
      UNEXPECTED_FAILURES.incrementAndGet();
      log.warn("{}: unexpected failure handling a {} frame; closing the connection", this,
          Frames.typeName(Frames.type(frame)), e);
      fatal(Frames.NULL_ID, "internal error: " + YarpcException.describe(e));
    } finally {
      frame.release();
    }
  }

  private void onFrame(ByteBuf frame) throws ProtocolException {
    int type = Frames.type(frame);
    int id = Frames.id(frame);
    switch (state) {
      case AWAIT_INIT_REQ:
        if (type != Frames.INIT_REQ) {
          throw ProtocolException.fatal("expected init req, got " + Frames.typeName(type));
        }
        onInitReq(frame, id);
        return;
      case AWAIT_INIT_RES:
        if (type == Frames.ERROR) {
          String message = errorMessage(frame);
          handshake.completeExceptionally(YarpcException.of(Code.UNAVAILABLE,
              "tchannel peer %s refused the handshake: %s", channel.remoteAddress(), message));
          ctx.close();
          return;
        }
        if (type != Frames.INIT_RES) {
          throw ProtocolException.fatal("expected init res, got " + Frames.typeName(type));
        }
        onInitRes(frame);
        return;
      default:
        break;
    }
    switch (type) {
      case Frames.CALL_REQ:
        onCallReq(frame, id);
        break;
      case Frames.CALL_REQ_CONTINUE:
        onCallReqContinue(frame, id);
        break;
      case Frames.CALL_RES:
      case Frames.CALL_RES_CONTINUE:
        onCallRes(frame, id, type == Frames.CALL_RES);
        break;
      case Frames.CANCEL:
        onCancel(id);
        break;
      case Frames.CLAIM:
      case Frames.PING_RES:
        break; // claim: accepted and ignored (docs/spec/wire-tchannel.md §5.4); ping res: nothing waits for it
      case Frames.PING_REQ:
        ctx.writeAndFlush(Frames.empty(alloc, Frames.PING_RES, id));
        break;
      case Frames.ERROR:
        onError(frame, id);
        break;
      case Frames.INIT_REQ:
      case Frames.INIT_RES:
        throw ProtocolException.fatal("unexpected " + Frames.typeName(type) + " after the handshake");
      default:
        throw ProtocolException.fatal("invalid frame type " + type);
    }
  }

  private void onProtocolError(ByteBuf frame, ProtocolException e) {
    int type = Frames.type(frame);
    int id = Frames.id(frame);
    boolean attributable = state == State.ACTIVE
        && (type == Frames.CALL_REQ || type == Frames.CALL_REQ_CONTINUE || type == Frames.CALL_RES
            || type == Frames.CALL_RES_CONTINUE);
    if (e.isFatal()) {
      fatal(attributable ? id : Frames.NULL_ID, e.getMessage());
      if (attributable && (type == Frames.CALL_RES || type == Frames.CALL_RES_CONTINUE)) {
        ClientCall c = clientCalls.get(id);
        if (c != null) {
          failClientCall(c, YarpcException.of(Code.INTERNAL, "malformed tchannel response: %s", e.getMessage()));
        }
      }
      return;
    }
    boolean more = moreFragments(frame);
    if (type == Frames.CALL_REQ || type == Frames.CALL_REQ_CONTINUE) {
      endServerMessage(id, more, e.errorCode(), e.getMessage());
    } else {
      ClientCall c = clientCalls.get(id);
      if (c != null) {
        failClientCall(c, YarpcException.of(e.isTooLarge() ? Code.RESOURCE_EXHAUSTED : Code.INTERNAL,
            "tchannel response: %s", e.getMessage()));
      }
    }
  }

  private static boolean moreFragments(ByteBuf frame) {
    return frame.readableBytes() > Frames.HEADER_SIZE
        && (frame.getUnsignedByte(frame.readerIndex() + Frames.HEADER_SIZE) & Frames.FLAG_MORE_FRAGMENTS) != 0;
  }

  /** Sends a fatal error frame and closes the connection. */
  private void fatal(int id, String message) {
    if (state == State.CLOSED) {
      return;
    }
    log.debug("{}: fatal protocol error: {}", this, message);
    state = State.CLOSED;
    handshake.completeExceptionally(YarpcException.of(Code.UNAVAILABLE, "tchannel protocol error: %s", message));
    ctx.writeAndFlush(Frames.error(alloc, id, ErrorCodes.FATAL, null, message))
        .addListener(ChannelFutureListener.CLOSE);
  }

  // ---------------------------------------------------------------------------------------------------
  // Handshake

  private void onInitReq(ByteBuf frame, int id) throws ProtocolException {
    InitFrames.Init init = InitFrames.decode(frame);
    if (init.version() != Frames.VERSION) {
      throw ProtocolException.fatal("unsupported protocol version " + init.version());
    }
    for (String required : new String[] {InitFrames.HOST_PORT, InitFrames.PROCESS_NAME}) {
      if (!init.headers().containsKey(required)) {
        throw ProtocolException.fatal("missing init frame header " + required);
      }
    }
    remoteHostPort = init.headers().get(InitFrames.HOST_PORT);
    ctx.writeAndFlush(InitFrames.encode(alloc, Frames.INIT_RES, id, initHeaders()));
    activate();
  }

  private void onInitRes(ByteBuf frame) throws ProtocolException {
    InitFrames.Init init = InitFrames.decode(frame);
    if (init.version() != Frames.VERSION) {
      throw ProtocolException.fatal("unsupported protocol version " + init.version());
    }
    remoteHostPort = init.headers().getOrDefault(InitFrames.HOST_PORT, "");
    activate();
  }

  private void activate() {
    state = State.ACTIVE;
    if (handshakeTimer != null) {
      handshakeTimer.cancel(false);
    }
    try {
      host.onHandshake(this);
    } catch (RuntimeException e) {
      log.warn("error after the handshake of {}", this, e);
    }
    handshake.complete(this);
  }

  // ---------------------------------------------------------------------------------------------------
  // Serving the peer's calls

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

  private void onCallReq(ByteBuf frame, int id) throws ProtocolException {
    discarding.remove(id);
    ServerCall existing = serverCalls.get(id);
    if (existing != null) {
      String message = "message id " + Frames.idString(id) + " is already in use";
      if (existing.future == null) {
        // the first message is still arriving: its fragments and the duplicate's can no longer be told
        // apart, so it ends too (one error frame answers both) and later fragments of the id are ignored
        endServerMessage(id, moreFragments(frame), ErrorCodes.BAD_REQUEST, message);
      } else {
        sendError(id, ErrorCodes.BAD_REQUEST, null, message);
      }
      return;
    }
    CallFrame f = CallFrame.parse(frame);
    if (serverCalls.size() >= settings.maxInFlightCalls()) {
      throw ProtocolException.of(ErrorCodes.BUSY, "too many in-flight calls on this connection (the limit is "
          + settings.maxInFlightCalls() + ")");
    }
    if (f.ttl() == 0) {
      throw ProtocolException.badRequest("timeout required");
    }
    ServerCall call = new ServerCall(f, settings.maxMessageBytes());
    serverCalls.put(id, call);
    if (call.assembler.add(f)) {
      dispatch(call);
    }
  }

  private void onCallReqContinue(ByteBuf frame, int id) throws ProtocolException {
    if (discarding.contains(id)) {
      if (!moreFragments(frame)) {
        discarding.remove(id);
      }
      return;
    }
    ServerCall call = serverCalls.get(id);
    if (call == null || call.future != null) {
      log.debug("{}: ignoring a call req continue frame for message {}, which is not being received", this,
          Frames.idString(id));
      return;
    }
    CallFrame f = CallFrame.parse(frame);
    if (call.assembler.add(f)) {
      dispatch(call);
    }
  }

  /** Ends a call req that cannot be served with an error frame; its later frames are ignored. */
  private void endServerMessage(int id, boolean moreFramesFollow, int errorCode, String message) {
    ServerCall call = serverCalls.get(id);
    byte[] tracing = null;
    if (call != null && call.future == null) {
      serverCalls.remove(id);
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

  private void discard(int id) {
    if (discarding.size() >= MAX_DISCARDED_IDS) {
      Iterator<Integer> it = discarding.iterator();
      it.next();
      it.remove();
    }
    discarding.add(id);
  }

  private void sendError(int id, int errorCode, byte[] tracing, String message) {
    ctx.writeAndFlush(Frames.error(alloc, id, errorCode, tracing, message));
  }

  private void dispatch(ServerCall call) {
    MessageAssembler a = call.assembler;
    RequestMeta meta;
    Body body;
    try {
      meta = CallCodec.decodeRequestMeta(call.service, call.transportHeaders, call.ttl, a.argBytes(0),
          a.argBytes(1));
    } catch (YarpcException e) {
      serverCalls.remove(call.id);
      a.release();
      sendError(call.id, ErrorCodes.fromCode(e.code()), call.tracing, e.getMessage());
      return;
    }
    body = a.takeBody(channel.alloc());
    a.release();
    CompletableFuture<Response> future;
    try {
      Router router = host.router();
      if (router == null) {
        throw YarpcException.of(Code.UNAVAILABLE, "no tchannel inbound serves calls on this connection");
      }
      HandlerSpec spec = router.choose(meta);
      if (spec.type() != RpcType.UNARY) {
        throw YarpcException.of(Code.UNIMPLEMENTED, "transport tchannel does not handle %s handlers", spec.type());
      }
      future = spec.unary().handle(Request.of(meta, body));
      if (future == null) {
        throw new NullPointerException("handler returned no future");
      }
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
          frames = List.of(Frames.error(alloc, call.id, ErrorCodes.fromCode(e.code()), call.tracing,
              e.getMessage()));
        }
      }
    } catch (IOException | RuntimeException e) {
      if (toRelease != null) {
        toRelease.release();
        toRelease = null;
      }
      YarpcException y = e instanceof YarpcException ? (YarpcException) e
          : YarpcException.of(Code.INTERNAL, "failed to write the response: %s", YarpcException.describe(e));
      frames = List.of(Frames.error(alloc, call.id, ErrorCodes.fromCode(y.code()), call.tracing, y.getMessage()));
    }
    List<ByteBuf> toWrite = frames;
    Body body = toRelease;
    runOnLoop(() -> {
      if (serverCalls.get(call.id) != call || call.cancelled || !channel.isActive()) {
        releaseAll(toWrite, body);
        return;
      }
      serverCalls.remove(call.id);
      writeMessage(toWrite, body);
    }, () -> releaseAll(toWrite, body));
  }

  private List<ByteBuf> encodeResponse(ServerCall call, Response response, YarpcException error)
      throws IOException {
    Map<String, String> headers = CallCodec.responseHeaders(call.service, response, error);
    int code = response.isApplicationError() || error != null ? 1 : 0;
    return CallCodec.encodeResponse(alloc, call.id, call.tracing, call.argScheme(), call.responseChecksum(), code,
        headers, response.body(), settings.maxFrameSize());
  }

  private void onCancel(int id) {
    ServerCall call = serverCalls.remove(id);
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

  // ---------------------------------------------------------------------------------------------------
  // Sending calls

  /** A call this side sent. */
  private static final class ClientCall {
    final int id;
    final RequestMeta meta;
    final byte[] tracing;
    final CompletableFuture<Response> result = new CompletableFuture<>();
    MessageAssembler assembler; // event loop only
    int code;
    io.netty.util.concurrent.ScheduledFuture<?> timer;

    ClientCall(int id, RequestMeta meta, byte[] tracing) {
      this.id = id;
      this.meta = meta;
      this.tracing = tracing;
    }
  }

  /**
   * Sends a call req; the returned future completes (on the event loop) with the response, whose body the
   * caller owns, or fails with a {@link YarpcException}. Takes ownership of {@code body}: it is released once
   * its frames are written or when the call cannot be sent. Cancelling the future sends a cancel frame and
   * drops whatever arrives for the call later. The call fails with {@code deadline-exceeded} when its
   * deadline passes, and with {@code unavailable} when the connection closes.
   */
  public CompletableFuture<Response> call(RequestMeta meta, Body body, ChecksumType checksumType) {
    if (!isActive()) {
      body.release();
      return CompletableFuture.failedFuture(YarpcException.of(Code.UNAVAILABLE,
          "tchannel connection to %s is closed", peerName()));
    }
    if (meta.deadline() == null) {
      body.release();
      return CompletableFuture.failedFuture(YarpcException.of(Code.INVALID_ARGUMENT, "missing TTL"));
    }
    long ttl = meta.deadline().remainingMillis();
    if (ttl <= 0 || meta.deadline().isExpired()) {
      body.release();
      return CompletableFuture.failedFuture(timeout(meta, Duration.ZERO));
    }
    int id = allocateId();
    ClientCall call = new ClientCall(id, meta, Tracing.newRoot());
    List<ByteBuf> frames;
    try {
      frames = CallCodec.encodeRequest(alloc, id, meta, body, ttl, call.tracing, checksumType,
          settings.maxFrameSize());
    } catch (YarpcException e) {
      body.release();
      return CompletableFuture.failedFuture(e);
    } catch (IOException | RuntimeException e) {
      body.release();
      return CompletableFuture.failedFuture(YarpcException.withCause(Code.INTERNAL,
          "failed to write the request body: " + YarpcException.describe(e), e));
    }
    clientCalls.put(id, call);
    call.result.whenComplete((r, e) -> {
      if (call.result.isCancelled()) {
        runOnLoop(() -> cancelClientCall(call, "cancelled by the caller"), () -> {});
      }
    });
    Duration ttlDuration = meta.deadline().timeRemaining();
    runOnLoop(() -> {
      if (clientCalls.get(id) != call || !isActive()) {
        releaseAll(frames, body);
        failClientCall(call, YarpcException.of(Code.UNAVAILABLE, "tchannel connection to %s closed",
            peerName()));
        return;
      }
      writeMessage(frames, body);
      call.timer = channel.eventLoop().schedule(() -> {
        if (clientCalls.get(id) == call) {
          cancelClientCall(call, "timeout");
          call.result.completeExceptionally(timeout(meta, ttlDuration));
        }
      }, Math.max(0, meta.deadline().remainingNanos()), TimeUnit.NANOSECONDS);
    }, () -> {
      releaseAll(frames, body);
      clientCalls.remove(id);
      call.result.completeExceptionally(YarpcException.of(Code.UNAVAILABLE, "tchannel transport is stopping"));
    });
    return call.result;
  }

  private static YarpcException timeout(RequestMeta meta, Duration ttl) {
    return YarpcException.of(Code.DEADLINE_EXCEEDED, "client timeout for procedure \"%s\" of service \"%s\" "
        + "after %s", meta.procedure(), meta.service(), GoDurations.format(ttl));
  }

  private int allocateId() {
    while (true) {
      int id = nextId.getAndIncrement();
      if (id == Frames.NULL_ID || id == 0) {
        continue; // 0xFFFFFFFF is reserved; 0 only after wrapping, skip it too
      }
      if (!clientCalls.containsKey(id)) {
        return id;
      }
    }
  }

  /** Event loop: forgets the call, sends a cancel frame, releases what was received. */
  private void cancelClientCall(ClientCall call, String why) {
    if (!clientCalls.remove(call.id, call)) {
      return;
    }
    cleanup(call);
    if (channel.isActive()) {
      long ttl = call.meta.deadline() == null ? 0 : call.meta.deadline().remainingMillis();
      ctx.writeAndFlush(Frames.cancel(alloc, call.id, ttl, call.tracing, why));
    }
  }

  private void cleanup(ClientCall call) {
    if (call.timer != null) {
      call.timer.cancel(false);
    }
    if (call.assembler != null) {
      call.assembler.release();
      call.assembler = null;
    }
  }

  /** Any thread (event loop for the state): the call ends with {@code error}. */
  private void failClientCall(ClientCall call, YarpcException error) {
    if (clientCalls.remove(call.id, call)) {
      if (channel.eventLoop().inEventLoop()) {
        cleanup(call);
      } else {
        runOnLoop(() -> cleanup(call), () -> {});
      }
    }
    call.result.completeExceptionally(error);
  }

  private void onCallRes(ByteBuf frame, int id, boolean first) throws ProtocolException {
    ClientCall call = clientCalls.get(id);
    if (call == null) {
      return; // cancelled, timed out, or never ours: dropped (the frame is released by the caller)
    }
    CallFrame f = CallFrame.parse(frame);
    if (first) {
      if (call.assembler != null) {
        throw ProtocolException.badRequest("second call res for message " + Frames.idString(id));
      }
      call.assembler = new MessageAssembler(false, f.checksumType(), settings.maxMessageBytes());
      call.code = f.code();
    } else if (call.assembler == null) {
      throw ProtocolException.badRequest("call res continue before call res for message " + Frames.idString(id));
    }
    if (!call.assembler.add(f)) {
      return;
    }
    clientCalls.remove(id);
    MessageAssembler a = call.assembler;
    call.assembler = null;
    if (call.timer != null) {
      call.timer.cancel(false);
    }
    byte[] arg2 = a.argBytes(1);
    Body body = a.takeBody(channel.alloc());
    a.release();
    Response response;
    try {
      response = CallCodec.decodeResponse(call.meta, call.code, arg2, body);
    } catch (YarpcException e) {
      if (!call.result.completeExceptionally(e)) {
        YarpcException.releaseResponse(e);
      }
      return;
    }
    if (!call.result.complete(response)) {
      response.body().release();
    }
  }

  private void onError(ByteBuf frame, int id) {
    int code = frame.readableBytes() > Frames.HEADER_SIZE
        ? frame.getUnsignedByte(frame.readerIndex() + Frames.HEADER_SIZE) : ErrorCodes.UNEXPECTED;
    String message = errorMessage(frame);
    if (code == ErrorCodes.FATAL) {
      state = State.CLOSED; // before failing the call: a retry must not pick this connection again
    }
    if (id != Frames.NULL_ID) {
      ClientCall call = clientCalls.get(id);
      if (call != null) {
        Code yarpcCode = ErrorCodes.toCode(code);
        String text = ErrorCodes.isMapped(code) ? message : "got tchannel error " + ErrorCodes.name(code)
            + " which did not have a matching YARPC code: " + message;
        failClientCall(call, YarpcException.of(yarpcCode, "%s", text));
      }
    } else {
      log.debug("{}: peer reported a connection error {}: {}", this, ErrorCodes.name(code), message);
    }
    if (code == ErrorCodes.FATAL) {
      ctx.close();
    }
  }

  private static String errorMessage(ByteBuf frame) {
    int start = frame.readerIndex() + Frames.HEADER_SIZE + 1 + Frames.TRACING_SIZE;
    int end = frame.readerIndex() + frame.readableBytes();
    if (end - start < 2) {
      return "";
    }
    int length = Math.min(frame.getUnsignedShort(start), end - start - 2);
    return frame.toString(start + 2, length, UTF_8);
  }

  // ---------------------------------------------------------------------------------------------------
  // Writing

  /** Event loop: writes a message's frames and flushes; {@code body} is released once they are written. */
  private void writeMessage(List<ByteBuf> frames, Body body) {
    ChannelFuture last = null;
    for (ByteBuf frame : frames) {
      last = ctx.write(frame);
    }
    ctx.flush();
    if (body != null) {
      if (last == null) {
        body.release();
      } else {
        last.addListener(f -> body.release());
      }
    }
  }

  private static void releaseAll(List<ByteBuf> frames, Body body) {
    for (ByteBuf b : frames) {
      if (b.refCnt() > 0) {
        b.release();
      }
    }
    if (body != null) {
      body.release();
    }
  }

  /** Runs {@code task} on the event loop (now when already there); {@code rejected} when the loop is gone. */
  private void runOnLoop(Runnable task, Runnable rejected) {
    EventLoop loop = channel.eventLoop();
    if (loop.inEventLoop()) {
      task.run();
      return;
    }
    try {
      loop.execute(task);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      rejected.run();
    }
  }
}
