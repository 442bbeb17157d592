package io.yarpc.transport.tchannel.internal;

import io.netty.buffer.ByteBuf;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.netty.internal.IoErrors;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.tchannel.ChecksumType;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The calls this side sends on one {@link Connection}: gives each a message id (from 1 up, skipping
 * {@code 0xFFFFFFFF}, 0 and ids still pending), writes its call req frames, keeps it pending until its
 * call res message is complete or an error frame arrives for its id, and turns that into the caller's
 * {@link Response} or {@link YarpcException}. A call the caller cancels, or whose deadline passes, is
 * forgotten and a cancel frame is sent; whatever arrives for it later is dropped.
 *
 * <p>Threads: {@link #call} and {@link #takeId} may be called from any thread ({@code call} encodes the
 * request's fields and headers on the calling thread; the event loop cuts the frames and writes them); everything else runs on the
 * connection's event loop. The pending map is concurrent; the per-call assembler is touched on
 * the event loop only. Result futures complete on the event loop, except the failures {@code call}
 * returns at once.
 *
 * <p>Buffers: {@code call} owns the request body it is given and releases it exactly once: after its
 * frames are written, or on every path where they are not. Response frames passed in stay the caller's
 * (arg chunks live on as retained slices in a {@link MessageAssembler}); a complete response's arg3
 * becomes a {@link Body} owned by whoever completes the result, and is released here when nobody takes
 * it. A pending call's partial response is released when the call ends in any other way.
 */
final class OutgoingCalls {
  private final FrameOutput out;
  private final Settings settings;
  private final BooleanSupplier usable;
  private final Supplier<String> peerName;
  private final AtomicInteger nextId;
  private final ConcurrentHashMap<Integer, ClientCall> calls = new ConcurrentHashMap<>();
  private final AtomicReference<Runnable> whenIdle = new AtomicReference<>();

  /**
   * The outbound calls of one connection.
   *
   * @param out where the frames go
   * @param settings frame and message size limits
   * @param firstId the first message id to give out (1 on a real connection)
   * @param usable whether the connection may carry calls (handshake done, not closed)
   * @param peerName names the peer in error messages
   */
  OutgoingCalls(
      FrameOutput out,
      Settings settings,
      int firstId,
      BooleanSupplier usable,
      Supplier<String> peerName) {
    this.out = out;
    this.settings = settings;
    this.nextId = new AtomicInteger(firstId);
    this.usable = usable;
    this.peerName = peerName;
  }

  /** A call this side sent. */
  private final class ClientCall implements FrameOutput.LoopWrite {
    final int id;
    final RequestMeta meta;
    final byte[] tracing;
    final CompletableFuture<Response> result = new CompletableFuture<>();
    MessageAssembler assembler; // event loop only
    int code;
    // the call req, from the calling thread to the event loop (through the queue)
    private CallCodec.Message request;
    private Body requestBody;

    ClientCall(int id, RequestMeta meta, byte[] tracing) {
      this.id = id;
      this.meta = meta;
      this.tracing = tracing;
    }

    /** Event loop: writes the call req unless the call ended or the connection closed meanwhile. */
    @Override
    public void write() {
      CallCodec.Message message = request;
      Body body = requestBody;
      request = null;
      requestBody = null;
      if (calls.get(id) != this || !usable.getAsBoolean()) {
        body.release();
        failCall(
            this,
            YarpcException.of(Code.UNAVAILABLE, "tchannel connection to %s closed", peerName.get())
                .withUnprocessed()); // before anything was written
        return;
      }
      List<ByteBuf> frames;
      try {
        frames = message.frames(out.alloc(), body);
      } catch (IOException | RuntimeException e) {
        body.release();
        failCall(this, bodyFailure(e));
        return;
      }
      out.writeMessage(frames, body);
    }

    @Override
    public void rejected() {
      requestBody.release();
      calls.remove(id);
      ended();
      result.completeExceptionally(
          YarpcException.of(Code.UNAVAILABLE, "tchannel transport is stopping").withUnprocessed());
    }
  }

  /** How many calls are pending. */
  int size() {
    return calls.size();
  }

  /**
   * Runs {@code action} once, on the thread that ends the last pending call, or now when none is pending.
   * The caller stops adding calls first; a call added meanwhile may find it already run.
   */
  void whenIdle(Runnable action) {
    whenIdle.set(action);
    ended();
  }

  /** A call was removed: runs the idle action when it was the last one. */
  private void ended() {
    if (whenIdle.get() != null && calls.isEmpty()) {
      Runnable action = whenIdle.getAndSet(null);
      if (action != null) {
        action.run();
      }
    }
  }

  /** Takes the next id as it is, unchecked: the handshake's init req takes the first one. */
  int takeId() {
    return nextId.getAndIncrement();
  }

  /** The next id for a call: never {@code 0xFFFFFFFF}, never 0, never one still pending. */
  int allocateId() {
    while (true) {
      int id = nextId.getAndIncrement();
      if (id == Frames.NULL_ID || id == 0) {
        continue; // 0xFFFFFFFF is reserved; 0 only after wrapping, skip it too
      }
      if (!calls.containsKey(id)) {
        return id;
      }
    }
  }

  /**
   * Sends a call req on a connection the caller found usable; see {@link Connection#call}. The deadline is
   * core's call path's (it checked there is one and arms the call's one timer, cancelling the returned
   * future when it passes): the call req carries the time left as its TTL, and a cancelled future sends a
   * cancel frame.
   */
  CompletableFuture<Response> call(RequestMeta meta, Body body, ChecksumType checksumType) {
    long ttl = meta.deadline() == null ? 0 : Math.max(1, meta.deadline().remainingMillis());
    return send(meta, body, checksumType, ttl);
  }

  /**
   * Encodes the call req frames (this thread), registers the call, and writes them (event loop).
   *
   * @param ttlMillis the TTL field of the call req
   */
  private CompletableFuture<Response> send(
      RequestMeta meta, Body body, ChecksumType checksumType, long ttlMillis) {
    int id = allocateId();
    ClientCall call = new ClientCall(id, meta, Tracing.forRequest(meta.propagationHeaders()));
    CallCodec.Message message;
    try {
      message =
          CallCodec.requestMessage(
              id, meta, ttlMillis, call.tracing, checksumType, settings.maxFrameSize());
    } catch (RuntimeException e) {
      body.release();
      return CompletableFuture.failedFuture(bodyFailure(e));
    }
    calls.put(id, call);
    call.result.whenComplete(
        (r, e) -> {
          if (call.result.isCancelled()) {
            Deadline d = call.meta.deadline();
            String why = d != null && d.isExpired() ? "timeout" : "cancelled by the caller";
            out.runOnLoop(() -> cancelCall(call, why), () -> {});
          }
        });
    call.request = message;
    call.requestBody = body;
    out.writeSoon(call);
    return call.result;
  }

  /** Why a call req could not be written: its own error, or {@code internal}. */
  private static YarpcException bodyFailure(Exception e) {
    return e instanceof YarpcException y
        ? y
        : YarpcException.withCause(
            Code.INTERNAL, "failed to write the request body: " + IoErrors.describe(e), e);
  }

  /** Event loop: forgets the call, sends a cancel frame, releases what was received. */
  private void cancelCall(ClientCall call, String why) {
    if (!calls.remove(call.id, call)) {
      return;
    }
    cleanup(call);
    if (out.isOpen()) {
      long ttl = call.meta.deadline() == null ? 0 : call.meta.deadline().remainingMillis();
      out.writeAndFlush(Frames.cancel(out.alloc(), call.id, ttl, call.tracing, why));
    }
    ended(); // after the cancel frame: closing now still sends it
  }

  private static void cleanup(ClientCall call) {
    if (call.assembler != null) {
      call.assembler.release();
      call.assembler = null;
    }
  }

  /** Any thread (event loop for the state): the call ends with {@code error}. */
  private void failCall(ClientCall call, YarpcException error) {
    if (calls.remove(call.id, call)) {
      if (out.inEventLoop()) {
        cleanup(call);
      } else {
        out.runOnLoop(() -> cleanup(call), () -> {});
      }
      ended();
    }
    call.result.completeExceptionally(error);
  }

  /** The pending call with message id {@code id}, if any, fails with {@code error}. */
  void fail(int id, YarpcException error) {
    ClientCall c = calls.get(id);
    if (c != null) {
      failCall(c, error);
    }
  }

  /** The connection closed: every pending call fails with {@code unavailable} and {@code why}. */
  void failAll(String why) {
    for (ClientCall c : new ArrayList<>(calls.values())) {
      failCall(c, YarpcException.of(Code.UNAVAILABLE, "%s", why));
    }
  }

  /**
   * A call res (first) or call res continue frame.
   *
   * @throws ProtocolException when the frame cannot be parsed (fatal) or breaks a message rule; the caller
   *     then fails the call
   */
  void onCallRes(ByteBuf frame, int id, boolean first) throws ProtocolException {
    ClientCall call = calls.get(id);
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
      throw ProtocolException.badRequest(
          "call res continue before call res for message " + Frames.idString(id));
    }
    if (!call.assembler.add(f)) {
      return;
    }
    calls.remove(id);
    try {
      deliver(call);
    } finally {
      ended(); // after the answer is delivered: an idle connection may close now
    }
  }

  /** Event loop: the whole response of {@code call} arrived; completes its future. */
  private void deliver(ClientCall call) throws ProtocolException {
    MessageAssembler a = call.assembler;
    call.assembler = null;
    byte[] arg2 = a.argBytes(1);
    Body body = a.takeBody();
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

  /**
   * An error frame for message {@code id}: the pending call, if any, fails with its code and message,
   * {@linkplain YarpcException#unprocessed() unprocessed} for {@code busy} and {@code declined}.
   */
  void onError(int id, int code, String message) {
    ClientCall call = calls.get(id);
    if (call != null) {
      Code yarpcCode = ErrorCodes.toCode(code);
      String text =
          ErrorCodes.isMapped(code)
              ? message
              : "got tchannel error "
                  + ErrorCodes.name(code)
                  + " which did not have a matching YARPC code: "
                  + message;
      YarpcException error = YarpcException.of(yarpcCode, "%s", text);
      // busy and declined promise that the call was not processed: always safe to retry
      // (docs/spec/wire-tchannel.md §8, §11)
      failCall(
          call,
          code == ErrorCodes.BUSY || code == ErrorCodes.DECLINED ? error.withUnprocessed() : error);
    }
  }
}
