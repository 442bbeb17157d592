package io.yarpc.transport.tchannel.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.netty.internal.KeepAliveHandler;
import io.yarpc.netty.internal.TlsErrors;
import io.yarpc.transport.Body;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.tchannel.ChecksumType;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One TChannel connection, in either role, and the Netty handler that runs it. After the init handshake
 * the connection is symmetric: it sends calls for this side's outbounds (multiplexed by message id) and
 * serves the peer's calls through its host's router, on the same socket.
 *
 * <p>This class owns the channel and routes what arrives: frames before the handshake is done go to the
 * {@link Handshake}; after it, call req, call req continue and cancel frames go to {@link IncomingCalls},
 * call res and call res continue frames and error frames for a message to {@link OutgoingCalls}; ping req
 * is answered here, claim and ping res are ignored (a ping res is read, which is all the keepalive
 * needs). It turns a {@link ProtocolException} from any of them
 * into an error frame (and, when fatal, closes the connection), and on close ends all three. Frames leave
 * through the connection's {@link FrameOutput}.
 *
 * <h2>TLS</h2>
 *
 * With TLS, a Netty {@code SslHandler} sits before the frame decoder and this handler sees plaintext
 * frames. A dialled connection is in the pipeline from the start (its init req waits in the TLS handler
 * until the TLS handshake is done); an accepted one joins after the TLS handshake, with its handshake
 * timer armed at the accept ({@link #armHandshakeTimer}). A TLS failure that reaches this handler (the
 * other side refusing the handshake after this side's part of it, a record that does not decrypt) closes
 * the connection, is kept for the dialler's error ({@link #tlsFailure()}), and is not counted as
 * unexpected.
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
 * Every frame read is released here once handled (the parts only read it); arg chunks live on as retained
 * slices in a {@link MessageAssembler} until the message is complete, then arg3 becomes a {@link Body}
 * owned by the handler invocation (requests) or the caller (responses). The bodies this side sends are
 * released once their frames have been written (or could not be). On close every partial message is
 * released, every pending call fails with {@code unavailable} at once, and every running handler is
 * cancelled.
 *
 * <h2>Bad input</h2>
 *
 * Nothing a peer sends makes an exception escape: a {@link ProtocolException} ends the message with an
 * error frame (bad request, busy, cancelled...) or, when fatal, sends a {@link ErrorCodes#FATAL} error frame
 * and closes the connection. Fatal: an impossible frame size, an unknown frame type, a frame before or a
 * second init frame after the handshake, an init frame without {@code host_port} or {@code process_name} or
 * with a version other than 2, and a call frame whose fields cannot be parsed (truncated fields, an empty,
 * repeated or over-long transport header key, more than 128 transport headers, an unknown checksum type).
 * Per message, connection kept: bad request for ttl 0 ("timeout required", unless the deadline policy
 * gives such calls a default timeout), a fragmented arg1, a last frame before arg3, more than three args,
 * a checksum mismatch or change, a duplicate message id, headers over the count or byte limit, a message
 * over the size limit ({@link ProtocolException#tooLarge}); busy when the connection already has the most
 * in-flight calls allowed, and for a message other than the oldest still arriving when the others hold
 * the connection's pending budget; timeout for a message still arriving at its deadline or after the read timeout.
 *
 * <h2>Limits on the connection</h2>
 *
 * As its {@link ConnectionLimits} say (an accepted connection has them all, a dialled one none of these):
 * the connection stops reading (auto-read off) while its outbound buffer is over the high water mark, so
 * a peer that does not read what it asked for cannot make it grow, and while it holds bytes for messages
 * still arriving ({@link PendingBytes}) while the inbound's shared budget is exhausted, unless it holds
 * that budget's exemption (one connection at a time, to finish its oldest message: see {@link
 * PendingBudget}); its own budget never stops it (the oldest message still arriving always goes on, the
 * others are refused past the budget: {@link IncomingCalls}), so it cannot deadlock. It closes when
 * frames wait to be written with no progress for the write timeout (what was waiting is released; this
 * holds for a connection already closing after a fatal error or the idle timeout too), and when it has
 * had no call in flight and no call frame read or written for the idle timeout (after flushing what is
 * still to be written; TChannel has no goaway frame).
 */
public final class Connection extends ChannelDuplexHandler {
  private static final Logger log = LoggerFactory.getLogger(Connection.class);
  private static final AtomicLong UNEXPECTED_FAILURES = new AtomicLong();

  private static final int PAUSED_UNWRITABLE = 1;
  private static final int PAUSED_PENDING = 2;

  private final boolean initiator;
  private final ConnectionHost host;
  private final ConnectionLimits limits;
  private final FrameOutput out;
  private final Handshake handshake;
  private final IncomingCalls inbound;
  private final OutgoingCalls outbound;
  private volatile Channel channel;
  private volatile boolean closed;
  // closeWhenIdle: no new outbound calls, close after the last one
  private volatile boolean draining;
  private volatile Throwable tlsFailure; // the TLS error the connection closed for, if any
  private boolean started; // event loop only: the handshake started
  private boolean closeNotified; // event loop only
  // the rest: event loop only
  private int pausedFor; // PAUSED_* bits; auto-read is on when 0
  private boolean waitingForBudget;
  private Object
      exemptFor; // the message for which this connection holds the shared budget's exemption
  private final Runnable budgetWake = this::wakeForBudget;
  private long lastCallActivity; // the event loop's clock
  private ScheduledFuture<?> idleTimer;
  private ScheduledFuture<?> writeTimer;
  // the write watch: the outbound buffer's head and its progress when progress was last seen
  private Object writeHead;
  private long writeHeadProgress;
  private long lastWriteProgress;

  /**
   * A connection handler.
   *
   * @param initiator true for a connection this side dialled (it sends init req), false for an accepted one
   */
  public Connection(boolean initiator, ConnectionHost host) {
    this.initiator = initiator;
    this.host = host;
    this.limits = host.limits();
    Settings settings = host.settings();
    this.out = new FrameOutput(settings.writeAllocator());
    this.handshake = new Handshake(initiator, host, this);
    this.inbound = new IncomingCalls(out, settings, host, this);
    // a call accepted before closeWhenIdle is still written: only a closed connection refuses it
    this.outbound = new OutgoingCalls(out, settings, 1, this::isOpen, this::peerName);
    out.listen(this::flushed);
    inbound.onExpired(() -> updateReading(true));
  }

  // ---------------------------------------------------------------------------------------------------
  // Accessors

  /** Completes when the handshake is done; fails when the connection closes before. */
  public CompletableFuture<Connection> handshakeFuture() {
    return handshake.future();
  }

  /** Whether the handshake is done, the connection still open, and not closing once idle. */
  public boolean isActive() {
    return !draining && isOpen();
  }

  /** Whether the handshake is done and the connection still open (closing once idle or not). */
  private boolean isOpen() {
    Channel ch = channel;
    return !closed && handshake.isDone() && ch != null && ch.isActive();
  }

  /** The channel (null before the handler is added). */
  public Channel channel() {
    return channel;
  }

  /** The peer's advertised {@code host_port} (empty before the handshake). */
  public String remoteHostPort() {
    return handshake.remoteHostPort();
  }

  /**
   * The TLS failure the connection closed for (a handshake the other side refused after this side's part
   * of it was done, as a TLS 1.3 server does when it rejects the client's certificate; a corrupt record),
   * or {@code null}.
   */
  public Throwable tlsFailure() {
    return tlsFailure;
  }

  /**
   * Arms the handshake timer now, before the handler joins the pipeline: an inbound calls it when it
   * accepts a TLS connection (on the channel's event loop), so that the time until the init handshake is
   * done counts from the accept, the TLS handshake included.
   */
  public void armHandshakeTimer(Channel ch) {
    handshake.armTimer(ch);
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

  /**
   * Closes the connection once the calls this side sent on it have ended (answered, failed, or past their
   * deadlines), at once when none is pending; until then it takes no new call (it is no longer {@linkplain
   * #isActive active}; a call sent meanwhile fails with {@code unavailable}, unprocessed). For a peer that
   * was released: its calls in flight finish. Calls the other side sent on this connection are not waited
   * for. Any thread; does not block.
   */
  public void closeWhenIdle() {
    draining = true;
    outbound.whenIdle(this::close);
  }

  @Override
  public String toString() {
    Channel ch = channel;
    return "tchannel connection "
        + (ch == null
            ? ""
            : ch.localAddress() + (initiator ? " -> " : " <- ") + ch.remoteAddress());
  }

  private String peerName() {
    String hp = handshake.remoteHostPort();
    Channel ch = channel;
    return hp.isEmpty() || hp.equals(InitFrames.EPHEMERAL_HOST_PORT)
        ? String.valueOf(ch == null ? "peer" : ch.remoteAddress())
        : hp;
  }

  // ---------------------------------------------------------------------------------------------------
  // Calls

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
      return CompletableFuture.failedFuture(
          YarpcException.of(
                  Code.UNAVAILABLE,
                  "tchannel connection to %s is %s",
                  peerName(),
                  draining ? "closing" : "closed")
              .withUnprocessed()); // nothing was sent
    }
    return outbound.call(meta, body, checksumType);
  }

  // ---------------------------------------------------------------------------------------------------
  // Channel events

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    out.attach(ctx);
    this.channel = ctx.channel();
    if (ctx.channel().isActive()) {
      startHandshake(ctx); // added to a connected channel: accepted, possibly after a TLS handshake
    }
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    startHandshake(ctx);
    ctx.fireChannelActive();
  }

  private void startHandshake(ChannelHandlerContext ctx) {
    if (!started) {
      started = true;
      handshake.start(ctx, outbound::takeId);
    }
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    out.readComplete();
    ctx.fireChannelReadComplete();
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    if (limits.stopReadingWhenUnwritable()) {
      setPaused(PAUSED_UNWRITABLE, !ctx.channel().isWritable());
    }
    ctx.fireChannelWritabilityChanged();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    closed = true;
    stopTimers();
    if (waitingForBudget) {
      waitingForBudget = false;
      limits.pendingBudget().cancel(budgetWake);
    }
    if (exemptFor != null) {
      exemptFor = null;
      limits.pendingBudget().endExempt(this);
    }
    handshake.fail(
        YarpcException.of(
            Code.UNAVAILABLE,
            "tchannel connection to %s closed before its handshake completed",
            ctx.channel().remoteAddress()));
    String keepAliveFailure = KeepAliveHandler.failure(ctx.channel());
    outbound.failAll(
        "tchannel connection to "
            + peerName()
            + " closed"
            + (keepAliveFailure == null ? "" : ": " + keepAliveFailure));
    inbound.closeAll();
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

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    if (TlsErrors.isTls(cause)) {
      // the other side refused the handshake late (TLS 1.3 sends a client certificate after the
      // client's handshake is done) or sent a record that does not decrypt: a peer's doing, not a
      // bug
      if (tlsFailure == null) {
        tlsFailure = cause;
      }
      log.debug("{}: TLS failure: {}; closing it", this, TlsErrors.describe(cause));
      handshake.fail(TlsErrors.handshakeFailure(peerName(), cause));
      ctx.close();
      return;
    }
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
      ReferenceCountUtil.release(msg);
      return;
    }
    out.reading();
    try {
      if (!closed) {
        onFrame(ctx, frame);
      }
      updateReading(true);
    } catch (ProtocolException e) {
      onProtocolError(frame, e);
      updateReading(true);
    } catch (RuntimeException | Error e) {
      UNEXPECTED_FAILURES.incrementAndGet();
      log.warn(
          "{}: unexpected failure handling a {} frame; closing the connection",
          this,
          Frames.typeName(Frames.type(frame)),
          e);
      // the exception's text stays in the log above, not on the wire
      fatal(Frames.NULL_ID, "internal error (the server logged it)");
    } finally {
      frame.release();
    }
  }

  // ---------------------------------------------------------------------------------------------------
  // Routing

  private void onFrame(ChannelHandlerContext ctx, ByteBuf frame) throws ProtocolException {
    if (!handshake.isDone()) {
      handshake.onFrame(frame);
      return;
    }
    int type = Frames.type(frame);
    int id = Frames.id(frame);
    if (Frames.isCallFrame(type)) {
      lastCallActivity = out.nanoTime();
    }
    switch (type) {
      case Frames.CALL_REQ:
        inbound.onCallReq(frame, id);
        break;
      case Frames.CALL_REQ_CONTINUE:
        inbound.onCallReqContinue(frame, id);
        break;
      case Frames.CALL_RES:
      case Frames.CALL_RES_CONTINUE:
        outbound.onCallRes(frame, id, type == Frames.CALL_RES);
        break;
      case Frames.CANCEL:
        inbound.onCancel(id);
        break;
      case Frames.CLAIM:
      case Frames.PING_RES:
        // claim: accepted and ignored (docs/spec/wire-tchannel.md §5.4); ping res: the keepalive
        // (first in the pipeline) already saw it arrive
        break;
      case Frames.PING_REQ:
        out.writeAnswer(Frames.empty(out.alloc(), Frames.PING_RES, id));
        break;
      case Frames.ERROR:
        onError(ctx, frame, id);
        break;
      case Frames.INIT_REQ:
      case Frames.INIT_RES:
        throw ProtocolException.fatal(
            "unexpected " + Frames.typeName(type) + " after the handshake");
      default:
        throw ProtocolException.fatal("invalid frame type " + type);
    }
  }

  private void onError(ChannelHandlerContext ctx, ByteBuf frame, int id) {
    int code =
        frame.readableBytes() > Frames.HEADER_SIZE
            ? frame.getUnsignedByte(frame.readerIndex() + Frames.HEADER_SIZE)
            : ErrorCodes.UNEXPECTED;
    String message = Frames.errorMessage(frame);
    if (code == ErrorCodes.FATAL) {
      closed = true; // before failing the call: a retry must not pick this connection again
    }
    if (id != Frames.NULL_ID) {
      outbound.onError(id, code, message);
    } else {
      log.debug(
          "{}: peer reported a connection error {}: {}", this, ErrorCodes.name(code), message);
    }
    if (code == ErrorCodes.FATAL) {
      ctx.close();
    }
  }

  private void onProtocolError(ByteBuf frame, ProtocolException e) {
    int type = Frames.type(frame);
    int id = Frames.id(frame);
    boolean attributable =
        !closed
            && handshake.isDone()
            && (type == Frames.CALL_REQ
                || type == Frames.CALL_REQ_CONTINUE
                || type == Frames.CALL_RES
                || type == Frames.CALL_RES_CONTINUE);
    if (e.isFatal()) {
      fatal(attributable ? id : Frames.NULL_ID, e.getMessage());
      if (attributable && (type == Frames.CALL_RES || type == Frames.CALL_RES_CONTINUE)) {
        outbound.fail(
            id,
            YarpcException.of(Code.INTERNAL, "malformed tchannel response: %s", e.getMessage()));
      }
      return;
    }
    boolean more = Frames.moreFragments(frame);
    if (type == Frames.CALL_REQ || type == Frames.CALL_REQ_CONTINUE) {
      inbound.endMessage(id, more, e.errorCode(), e.getMessage());
    } else {
      outbound.fail(
          id,
          YarpcException.of(
              e.isTooLarge() ? Code.RESOURCE_EXHAUSTED : Code.INTERNAL,
              "tchannel response: %s",
              e.getMessage()));
    }
  }

  /** Sends a fatal error frame and closes the connection. */
  private void fatal(int id, String message) {
    if (closed) {
      return;
    }
    log.debug("{}: fatal protocol error: {}", this, message);
    closed = true;
    handshake.fail(YarpcException.of(Code.UNAVAILABLE, "tchannel protocol error: %s", message));
    out.writeAndFlush(Frames.error(out.alloc(), id, ErrorCodes.FATAL, null, message))
        .addListener(ChannelFutureListener.CLOSE);
  }

  // ---------------------------------------------------------------------------------------------------
  // Limits on the connection (event loop only)

  /** The handshake is done: the idle timer and the keepalive start. */
  void handshakeDone() {
    if (channel == null) {
      return; // a handshake tested on its own
    }
    lastCallActivity = out.nanoTime();
    if (limits.idleTimeoutNanos() > 0) {
      idleTimer = out.schedule(this::checkIdle, limits.idleTimeoutNanos());
    }
    KeepAliveHandler.install(channel.pipeline(), host.keepAlive(), new Pings());
  }

  /** The keepalive's pings: a ping req with an id of its own (docs/spec/wire-tchannel.md §5.4). */
  private final class Pings implements KeepAliveHandler.Pinger {
    @Override
    public boolean hasCalls() {
      return inbound.size() > 0 || outbound.size() > 0;
    }

    @Override
    public CompletionStage<?> ping(Channel ch) {
      if (!closed) {
        out.writeAndFlush(Frames.empty(out.alloc(), Frames.PING_REQ, outbound.allocateId()));
      }
      return null; // the ping res, or any other frame, is read on this connection
    }
  }

  /**
   * Any thread (the one that released bytes of the shared budget): re-evaluates reading on this
   * connection's event loop, always as a task of its own (never inside the releasing call).
   */
  private void wakeForBudget() {
    Channel ch = channel;
    if (ch == null) {
      return;
    }
    try {
      ch.eventLoop().execute(this::budgetAvailable);
    } catch (RejectedExecutionException e) {
      // the transport is stopping: the connection is closing anyway
    }
  }

  private void stopTimers() {
    if (idleTimer != null) {
      idleTimer.cancel(false);
      idleTimer = null;
    }
    if (writeTimer != null) {
      writeTimer.cancel(false);
      writeTimer = null;
    }
  }

  private void setPaused(int reason, boolean paused) {
    int before = pausedFor;
    pausedFor = paused ? before | reason : before & ~reason;
    if ((before == 0) != (pausedFor == 0)) {
      channel.config().setAutoRead(pausedFor == 0);
    }
  }

  /**
   * Stops or resumes reading for the bytes held for messages still arriving. The connection's own budget
   * never stops it (its oldest message must be able to complete while others interleave with it: {@link
   * IncomingCalls} refuses the others' frames past the budget instead). While the inbound's shared budget
   * is exhausted, a connection holding such bytes stops reading and waits to be woken, unless it holds the
   * shared budget's exemption: that it takes after a frame (not on a wake, so a stalled peer does not take
   * it), for its oldest message still arriving, and gives back when that message is no longer arriving.
   *
   * @param afterFrame whether a frame was just read or a message timer fired (false: woken by the budget)
   */
  private void updateReading(boolean afterFrame) {
    PendingBytes pending = inbound.pending();
    PendingBudget budget = pending.budget();
    boolean gaveBack = false;
    if (exemptFor != null && (closed || !inbound.isArriving(exemptFor))) {
      exemptFor = null;
      budget.endExempt(this);
      gaveBack = true; // not taken again at once: the connections it woke get a chance first
    }
    long held = pending.held();
    if (held == 0 && pausedFor == 0 && !waitingForBudget) {
      return; // the usual case
    }
    boolean waitBudget = false;
    if (held > 0 && !closed && exemptFor == null && budget.exhausted()) {
      Object oldest = inbound.oldestArriving();
      if (afterFrame && !gaveBack && oldest != null && budget.tryExempt(this)) {
        exemptFor = oldest;
      } else if (!afterFrame && budget.exemptionFree()) {
        // woken with the exemption free: read on; the next frame read takes it if still free
      } else {
        waitBudget = waitingForBudget || budget.await(budgetWake);
      }
    }
    if (waitingForBudget && !waitBudget) {
      budget.cancel(budgetWake);
    }
    waitingForBudget = waitBudget;
    setPaused(PAUSED_PENDING, waitBudget);
  }

  /**
   * The shared budget dropped below its limit or its exemption was given back (the budget forgot this
   * connection's registration).
   */
  private void budgetAvailable() {
    waitingForBudget = false;
    if (!closed) {
      updateReading(false);
    }
  }

  /** After every flush: call frames count as activity; frames left unwritten start the write watch. */
  private void flushed(boolean callMessage) {
    if (callMessage) {
      lastCallActivity = out.nanoTime();
    }
    // a closing connection is watched too: it closes once its last frame is written, or at the
    // timeout
    if (limits.writeTimeoutNanos() > 0 && writeTimer == null && channel.isActive()) {
      ChannelOutboundBuffer buffer = channel.unsafe().outboundBuffer();
      if (buffer != null && !buffer.isEmpty()) {
        writeHead = buffer.current();
        writeHeadProgress = buffer.currentProgress();
        lastWriteProgress = out.nanoTime();
        writeTimer = out.schedule(this::checkWrites, writeCheckInterval());
      }
    }
  }

  /**
   * The write watch: while frames wait in the outbound buffer, some of them must be written within the
   * write timeout (progress is sampled: see {@link #writeCheckInterval}), or the connection closes (and
   * Netty releases what was waiting).
   */
  private void checkWrites() {
    writeTimer = null;
    ChannelOutboundBuffer buffer = channel.unsafe().outboundBuffer();
    if (!channel.isActive() || buffer == null || buffer.isEmpty()) {
      return;
    }
    long now = out.nanoTime();
    Object head = buffer.current();
    long progress = buffer.currentProgress();
    if (head != writeHead || progress != writeHeadProgress) {
      writeHead = head;
      writeHeadProgress = progress;
      lastWriteProgress = now;
    }
    long stalled = now - lastWriteProgress;
    long timeout = limits.writeTimeoutNanos();
    if (stalled >= timeout) {
      log.debug(
          "{}: nothing written for {} ms ({} bytes waiting); closing the connection",
          this,
          TimeUnit.NANOSECONDS.toMillis(stalled),
          buffer.totalPendingWriteBytes());
      writeHead = null;
      closed = true;
      channel.close();
      return;
    }
    writeTimer = out.schedule(this::checkWrites, Math.min(timeout - stalled, writeCheckInterval()));
  }

  /**
   * Progress is sampled four times per write timeout, so a connection closes at most a quarter of it
   * late.
   */
  private long writeCheckInterval() {
    return Math.max(1, limits.writeTimeoutNanos() / 4);
  }

  /**
   * The idle timer: a connection with no call in flight in either direction and no call frame read or
   * written for the idle timeout is closed, once what is still to be written has been flushed.
   */
  private void checkIdle() {
    idleTimer = null;
    if (closed || !channel.isActive()) {
      return;
    }
    long timeout = limits.idleTimeoutNanos();
    if (inbound.size() > 0 || outbound.size() > 0) {
      idleTimer = out.schedule(this::checkIdle, timeout);
      return;
    }
    long idle = out.nanoTime() - lastCallActivity;
    if (idle < timeout) {
      idleTimer = out.schedule(this::checkIdle, timeout - idle);
      return;
    }
    log.debug("{}: no call for {} ms; closing the idle connection", this, idle / 1_000_000);
    closed = true;
    out.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
  }
}
