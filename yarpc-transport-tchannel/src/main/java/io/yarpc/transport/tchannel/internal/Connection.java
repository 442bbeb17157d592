package io.yarpc.transport.tchannel.internal;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.util.ReferenceCountUtil;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.tchannel.ChecksumType;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
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
 * is answered here, claim and ping res are ignored. It turns a {@link ProtocolException} from any of them
 * into an error frame (and, when fatal, closes the connection), and on close ends all three. Frames leave
 * through the connection's {@link FrameOutput}.
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
 * Per message, connection kept: bad request for ttl 0 ("timeout required"), a fragmented arg1, a last frame
 * before arg3, more than three args, a checksum mismatch or change, a message over the size limit, a
 * duplicate message id; busy when the connection already has the most in-flight calls allowed.
 */
public final class Connection extends ChannelDuplexHandler {
  private static final Logger log = LoggerFactory.getLogger(Connection.class);
  private static final AtomicLong UNEXPECTED_FAILURES = new AtomicLong();

  private final boolean initiator;
  private final ConnectionHost host;
  private final FrameOutput out;
  private final Handshake handshake;
  private final IncomingCalls inbound;
  private final OutgoingCalls outbound;
  private volatile Channel channel;
  private volatile boolean closed;
  private boolean closeNotified; // event loop only

  /**
   * A connection handler.
   *
   * @param initiator true for a connection this side dialled (it sends init req), false for an accepted one
   */
  public Connection(boolean initiator, ConnectionHost host) {
    this.initiator = initiator;
    this.host = host;
    Settings settings = host.settings();
    this.out = new FrameOutput(settings.writeAllocator());
    this.handshake = new Handshake(initiator, host, this);
    this.inbound = new IncomingCalls(out, settings, host, this);
    this.outbound = new OutgoingCalls(out, settings, 1, this::isActive, this::peerName);
  }

  // ---------------------------------------------------------------------------------------------------
  // Accessors

  /** Completes when the handshake is done; fails when the connection closes before. */
  public CompletableFuture<Connection> handshakeFuture() {
    return handshake.future();
  }

  /** Whether the handshake is done and the connection still open. */
  public boolean isActive() {
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
          YarpcException.of(Code.UNAVAILABLE, "tchannel connection to %s is closed", peerName()));
    }
    return outbound.call(meta, body, checksumType);
  }

  // ---------------------------------------------------------------------------------------------------
  // Channel events

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    out.attach(ctx);
    this.channel = ctx.channel();
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    handshake.start(ctx, outbound::takeId);
    ctx.fireChannelActive();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    closed = true;
    handshake.fail(
        YarpcException.of(
            Code.UNAVAILABLE,
            "tchannel connection to %s closed before its handshake completed",
            ctx.channel().remoteAddress()));
    outbound.failAll("tchannel connection to " + peerName() + " closed");
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
    try {
      if (!closed) {
        onFrame(ctx, frame);
      }
    } catch (ProtocolException e) {
      onProtocolError(frame, e);
    } catch (RuntimeException | Error e) {
      UNEXPECTED_FAILURES.incrementAndGet();
      log.warn(
          "{}: unexpected failure handling a {} frame; closing the connection",
          this,
          Frames.typeName(Frames.type(frame)),
          e);
      fatal(Frames.NULL_ID, "internal error: " + YarpcException.describe(e));
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
        break; // claim: accepted and ignored (docs/spec/wire-tchannel.md §5.4); ping res: nothing
      // waits for it
      case Frames.PING_REQ:
        out.writeAndFlush(Frames.empty(out.alloc(), Frames.PING_RES, id));
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
}
