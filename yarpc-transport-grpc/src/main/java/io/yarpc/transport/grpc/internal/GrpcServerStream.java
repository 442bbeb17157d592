package io.yarpc.transport.grpc.internal;

import static java.util.Objects.requireNonNull;

import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.Status;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.GoDurations;
import io.yarpc.transport.Body;
import io.yarpc.transport.Handler;
import io.yarpc.transport.Headers;
import io.yarpc.transport.InboundCalls;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.ServerStream;
import io.yarpc.transport.StreamMessage;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * The server's end of a gRPC stream (client, server or bidirectional streaming: gRPC does not tell them
 * apart on the wire), and the grpc-java listener of its call.
 *
 * <p>Flow control ({@link StreamFlow}): {@link #receive()} asks grpc-java for exactly one message
 * ({@code request(1)}), so nothing is buffered beyond what the handler asked for; {@link #send} completes
 * its future only when the call {@linkplain ServerCall#isReady() is ready} again (at once or on {@code
 * onReady}). Once the client half-closed, a receive that finds no message waiting gets the end of the
 * stream ({@code null}), unless the client cancelled.
 *
 * <p>Ownership: a received message belongs to the handler, which releases it; a message that arrives
 * when nobody waits for it any more (a cancelled receive, a closed stream) is released here. A sent
 * message is handed to grpc-java, which releases it once written (or dropped); one that cannot be sent
 * is released at once.
 *
 * <p>The stream ends when the handler's future completes, with the {@linkplain #setTrailers trailers} set:
 * normally with status OK, exceptionally with the error's status (its name prefixed to the message, details in {@code grpc-status-details-bin}). If the
 * client cancels, pending and later operations fail with {@code cancelled} and the handler's future is
 * cancelled.
 *
 * <p>Read timeout (the inbound's {@code InboundLimits.readTimeout}; docs/spec/wire-grpc.md §4.5): a
 * request message the handler asked for that began to arrive must arrive whole within it (see {@link
 * #readTimedOut}); a stream waiting for the client to begin its next message waits as long as the
 * handler does.
 *
 * <p>Write timeout (the inbound's {@code InboundLimits.writeTimeout}): while a send is pending (the call
 * is not ready: the client grants no flow-control window), and from the end of the stream until
 * grpc-java wrote its trailers, the inbound's {@link CallWatch} waits at most the write timeout; each
 * time the call becomes ready again the wait ends (or starts again). When it runs out, the stream is
 * reset ({@link StreamReset}), which drops what was queued and cancels the handler as a client cancel
 * does.
 *
 * <p>Thread-safety: every use of the {@link ServerCall} happens under this object's lock; futures are
 * completed outside it.
 */
final class GrpcServerStream extends ServerCall.Listener<Body>
    implements ServerStream, CallWatch.Watched {
  private final ServerCall<Body, Body> call;
  private final RequestMeta meta;
  private final StreamFlow
      flow; // cancelled: the client went away; closed: the handler ended the stream

  private boolean headersSent; // guarded by this
  private Headers trailers = Headers.empty(); // guarded by this
  private boolean halfClosed; // guarded by this: the client sends no more
  private CompletableFuture<Void> result; // guarded by this
  private final StreamReset reset;
  private final long readTimeoutNanos;
  private final long writeTimeoutNanos;
  private final CallWatch watch;
  private YarpcException readTimedOut; // guarded by this: what ended the stream, if a read timeout
  private volatile boolean writeWaiting; // written under the lock: a write waits for the client
  private volatile long writeDue; // written under the lock: when that wait runs out
  private boolean complete; // guarded by this: grpc-java wrote the end of the stream

  GrpcServerStream(
      ServerCall<Body, Body> call,
      RequestMeta meta,
      long maxSendMessageSize,
      StreamReset reset,
      CallWatch watch,
      long readTimeoutNanos,
      long writeTimeoutNanos) {
    this.call = call;
    this.meta = meta;
    this.reset = reset;
    this.watch = watch;
    this.readTimeoutNanos = readTimeoutNanos;
    this.writeTimeoutNanos = writeTimeoutNanos;
    this.flow =
        new StreamFlow(this, new Wire(), maxSendMessageSize, this::receiveEnd, this::sendRefusal);
  }

  /** Runs {@code handler} on this stream; returns the listener grpc-java delivers the call's events to. */
  GrpcServerStream start(Handler<ServerStream, Void> handler) {
    // watched until the call ends (no onComplete or onCancel comes before this returns)
    watch.add(this);
    CompletableFuture<Void> f = InboundCalls.handle(handler, this, () -> {});
    boolean cancelNow;
    synchronized (this) {
      result = f;
      cancelNow = flow.cancelledLocked();
    }
    if (cancelNow) {
      f.cancel(false);
    }
    f.whenComplete(this::finish);
    return this;
  }

  @Override
  public RequestMeta meta() {
    return meta;
  }

  @Override
  public CompletableFuture<StreamMessage> receive() {
    return flow.receive();
  }

  /**
   * How a receive that finds nothing unclaimed ends: cancelled, at the end of the stream once the client
   * half-closed, or closed; else it waits. (Nothing is unclaimed once cancelled or closed: both drop it.)
   */
  private CompletableFuture<StreamMessage> receiveEnd() {
    if (flow.cancelledLocked()) {
      return CompletableFuture.failedFuture(cancelledError());
    }
    if (halfClosed) {
      return CompletableFuture.completedFuture(null);
    }
    if (flow.closedLocked()) {
      return CompletableFuture.failedFuture(StreamFlow.closedError(meta));
    }
    return null;
  }

  @Override
  public CompletableFuture<Void> send(StreamMessage message) {
    return flow.send(message);
  }

  /** From now on, a write waits for the client, at most the write timeout. */
  private void waitForWriteLocked() {
    writeDue = System.nanoTime() + writeTimeoutNanos;
    writeWaiting = true;
  }

  @Override
  public void check(long nowNanos) {
    long since = reset.messageSince();
    if (since != 0 && nowNanos - since >= readTimeoutNanos) {
      readTimedOut(since);
    }
    if (writeWaiting && nowNanos - writeDue >= 0) {
      synchronized (this) {
        if (!writeWaiting || nowNanos - writeDue < 0 || complete || flow.cancelledLocked()) {
          return;
        }
        writeWaiting = false;
      }
      reset.reset("stream message not written within the write timeout: the client does not read");
    }
  }

  /**
   * A request message began to arrive (the handler asked for it) and did not finish within the read
   * timeout: the stream ends with {@code deadline-exceeded} (the handler's future is cancelled, and
   * {@link #finish} sends the status, which releases what arrived of the message), then, once the
   * status is written, is reset so the client stops sending.
   */
  private void readTimedOut(long since) {
    CompletableFuture<Void> handler;
    synchronized (this) {
      if (reset.messageSince() != since
          || readTimedOut != null
          || flow.closedLocked()
          || flow.cancelledLocked()) {
        return;
      }
      readTimedOut =
          YarpcException.of(
              Code.DEADLINE_EXCEEDED,
              "stream message for procedure \"%s\" of service \"%s\" from caller \"%s\" did not"
                  + " arrive within the read timeout of %s",
              meta.procedure(),
              meta.service(),
              meta.caller(),
              GoDurations.format(Duration.ofNanos(readTimeoutNanos)));
      handler = result;
    }
    if (handler != null) {
      handler.cancel(false); // finish() sends the status; onComplete() then resets the stream
    } else {
      reset.reset("stream message not received within the read timeout");
    }
  }

  /** Why a message may not be sent now, or null. */
  private Throwable sendRefusal(Body body) {
    if (flow.cancelledLocked()) {
      return cancelledError();
    }
    if (flow.closedLocked()) {
      return StreamFlow.closedError(meta);
    }
    return null;
  }

  @Override
  public void sendHeaders(Headers headers) {
    requireNonNull(headers, "headers");
    Metadata md = Metadatas.streamHeaders(headers);
    synchronized (this) {
      if (headersSent) {
        throw new IllegalStateException("stream headers were already sent");
      }
      if (flow.closedLocked()) {
        throw new IllegalStateException("the stream is closed");
      }
      if (flow.cancelledLocked()) {
        throw cancelledError();
      }
      headersSent = true;
      call.sendHeaders(md);
    }
  }

  @Override
  public void setCompression(String compressor) {
    requireNonNull(compressor, "compressor");
    synchronized (this) {
      if (headersSent || flow.closedLocked() || flow.cancelledLocked()) {
        return; // too late: grpc-java decides compression with the headers
      }
      try {
        call.setCompression(compressor);
      } catch (IllegalArgumentException unknown) {
        // a compressor grpc-java does not know: the stream goes out uncompressed
      }
    }
  }

  @Override
  public synchronized void setTrailers(Headers trailers) {
    this.trailers = requireNonNull(trailers, "trailers");
  }

  // ---------------------------------------------------------------------------------------------------
  // grpc-java call events

  @Override
  public void onMessage(Body body) {
    flow.onMessage(body);
  }

  @Override
  public void onHalfClose() {
    CompletableFuture<StreamMessage> f;
    synchronized (this) {
      halfClosed = true;
      f = flow.takeReceiveLocked();
    }
    if (f != null) {
      f.complete(null);
    }
  }

  @Override
  public void onReady() {
    flow.onReady();
    synchronized (this) {
      if (flow.closedLocked() && writeWaiting) {
        // the end of the stream is being written and made progress: its write timeout starts again
        waitForWriteLocked();
      }
    }
  }

  @Override
  public void onComplete() {
    boolean resetNow;
    synchronized (this) {
      complete = true;
      writeWaiting = false;
      resetNow = readTimedOut != null && !halfClosed;
    }
    watch.remove(this);
    if (resetNow) {
      // The status is written; grpc-java cancels the call's context only after this returns, so the
      // reset still reaches the stream, which it closes: the client stops sending.
      reset.reset("stream message not received within the read timeout");
    }
  }

  @Override
  public void onCancel() {
    StreamFlow.Detached detached;
    CompletableFuture<Void> handler;
    watch.remove(this);
    synchronized (this) {
      writeWaiting = false;
      if (flow.cancelledLocked()) {
        return;
      }
      detached = flow.cancelLocked();
      handler = flow.closedLocked() ? null : result;
    }
    detached.fail(cancelledError());
    if (handler != null) {
      handler.cancel(false);
    }
  }

  /** The handler's future completed: end the call with its status. */
  private void finish(Void ignored, Throwable error) {
    StreamFlow.Detached detached;
    synchronized (this) {
      if (flow.closedLocked()) {
        return;
      }
      detached = flow.closeLocked(true); // the handler is done receiving
      if (!flow.cancelledLocked()) {
        Metadata md = new Metadata();
        Metadatas.putResponseHeaders(md, trailers);
        Status status =
            readTimedOut != null
                ? GrpcErrors.toStatus(readTimedOut, md, false)
                : error == null
                    ? Status.OK
                    : GrpcErrors.toStatus(YarpcException.from(error), md, false);
        try {
          call.close(status, md);
          if (!complete) {
            // what is still queued, and the trailers behind it, must be written in time too
            waitForWriteLocked();
          }
        } catch (RuntimeException e) {
          // the transport already failed the stream: nothing left to tell the client
        }
      }
    }
    if (error != null) {
      Throwable root = io.yarpc.internal.Futures.unwrap(error);
      if (root instanceof YarpcException && ((YarpcException) root).response() != null) {
        ((YarpcException) root).response().body().release();
      }
    }
    detached.fail(StreamFlow.closedError(meta));
  }

  private YarpcException cancelledError() {
    return YarpcException.of(
        Code.CANCELLED,
        "stream for procedure \"%s\" of service \"%s\" from caller " + "\"%s\" was cancelled",
        meta.procedure(),
        meta.service(),
        meta.caller());
  }

  /**
   * The flow's view of {@link #call}, used under this object's lock. gRPC sends headers before the first
   * message: unless {@link #sendHeaders} did, the first message sends empty ones.
   */
  private final class Wire implements StreamFlow.Wire {
    @Override
    public void request(int count) {
      call.request(count);
    }

    @Override
    public void sendMessage(Body body) {
      if (!headersSent) {
        headersSent = true;
        call.sendHeaders(new Metadata());
      }
      call.sendMessage(body);
    }

    @Override
    public boolean isReady() {
      return call.isReady();
    }

    @Override
    public void sendWaiting(boolean waiting) {
      if (waiting) {
        // the message waits for the client's window, at most the write timeout
        waitForWriteLocked();
      } else if (!flow.closedLocked()) {
        writeWaiting = false;
      }
    }
  }
}
