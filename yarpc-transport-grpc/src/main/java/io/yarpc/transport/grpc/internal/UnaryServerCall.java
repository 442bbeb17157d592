package io.yarpc.transport.grpc.internal;

import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.Status;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.GoDurations;
import io.yarpc.transport.Body;
import io.yarpc.transport.Handler;
import io.yarpc.transport.InboundCalls;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.RpcType;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One inbound unary call (docs/spec/wire-grpc.md §4.4): receive exactly one message, invoke the handler once the
 * client half-closes, then always send a response message — the handler's body, the body of a response
 * attached to its error, or an empty one — followed by the status, with the response metadata in the
 * trailers ({@code rpc-service}, application headers, application-error keys, {@code rpc-error-name}).
 * A response's {@linkplain Response#initialHeaders() initial headers} go in the initial metadata (and, for
 * a YARPC peer, which reads only the trailers as yarpc-go does, in the trailers too), and its
 * {@linkplain Response#compression() compression} is asked of grpc-java.
 *
 * <p>Limits (the inbound's {@code InboundLimits}; docs/spec/wire-grpc.md §4.5): the call's deadline runs
 * from its headers, not from the end of its request. When the call starts, a call without a deadline
 * under a strict {@code DeadlinePolicy} is answered {@code missing TTL} at once, without reading its
 * request; otherwise, if its request (its message and the client's half-close) has not arrived by the
 * deadline or the read timeout, whichever is sooner, the call ends with {@code deadline-exceeded}, what
 * was received is released, and once the status is written the stream is reset if the client is still
 * sending. Once the response
 * is handed to grpc-java, it must be written: when it is neither complete nor becomes ready again (the
 * client grants no flow-control window) within the write timeout, the stream is reset, which drops what
 * was queued. The inbound's {@link CallWatch} checks both, without a timer per call.
 *
 * <p>Ownership: the received body is this call's until the handler is invoked, then the invocation's
 * (the dispatcher's handler releases it when the handler completes); a body received when none is wanted
 * is released at once. The response body (or the error's response body) is released once written, or at
 * once when the client has gone. A client that cancels cancels the handler's future.
 *
 * <p>Thread-safety: grpc-java serialises the listener callbacks; the handler's result and the watch's
 * checks arrive on any thread. All use of the {@link ServerCall} happens under this object's lock, and
 * the lock is never held while completing or cancelling a future that others may listen to.
 */
final class UnaryServerCall extends ServerCall.Listener<Body>
    implements CallWatch.Watched, BiConsumer<Response, Throwable> {
  private static final Logger log = LoggerFactory.getLogger(UnaryServerCall.class);

  private static final int RECEIVING = 0;
  private static final int HANDLING = 1;
  private static final int WRITING = 2;
  private static final int DONE = 3;

  private final ServerCall<Body, Body> call;
  private final RequestMeta meta;
  private final Handler<Request, Response> handler;
  private final long maxSendMessageSize;
  private final StreamReset reset;
  private final CallWatch watch;
  private final long writeTimeoutNanos;

  /** The caller sent {@code rpc-caller}: a YARPC peer, which reads response headers from the trailers. */
  private final boolean yarpcPeer;

  private Body request; // guarded by this
  private boolean invoked; // guarded by this
  private boolean halfClosed; // guarded by this: the client sent all of its request
  private boolean cancelled; // guarded by this: the client went away
  private boolean closed; // guarded by this: we closed the call
  private boolean complete; // guarded by this: grpc-java wrote all of the response
  private boolean resetWhenWritten; // guarded by this: the client still sends what nobody reads
  private CompletableFuture<Response> result; // guarded by this
  private volatile int phase = RECEIVING; // written under this object's lock, read by the watch
  private volatile long due; // when the phase runs out of time: written under this object's lock,
  // except by onReady (write progress)
  private boolean byDeadline; // guarded by this: the receive phase ends at the call's deadline
  private long receiveNanos; // guarded by this: how long the receive phase may take

  UnaryServerCall(
      ServerCall<Body, Body> call,
      RequestMeta meta,
      Handler<Request, Response> handler,
      long maxSendMessageSize,
      boolean yarpcPeer,
      StreamReset reset,
      CallWatch watch,
      long writeTimeoutNanos) {
    this.yarpcPeer = yarpcPeer;
    this.call = call;
    this.meta = meta;
    this.handler = handler;
    this.maxSendMessageSize = maxSendMessageSize;
    this.reset = reset;
    this.watch = watch;
    this.writeTimeoutNanos = writeTimeoutNanos;
  }

  /**
   * Starts receiving the request, for at most {@code readTimeoutNanos} or until the call's deadline; a
   * call that has no deadline (strict policy) is answered {@code missing TTL} instead.
   */
  UnaryServerCall start(long readTimeoutNanos) {
    long now = System.nanoTime();
    YarpcException missing = InboundCalls.missingDeadline(meta, RpcType.UNARY);
    synchronized (this) {
      if (missing != null) {
        phase = HANDLING; // answered below: nothing to receive
      } else {
        long remaining = Math.max(0, meta.deadline().remainingNanos());
        byDeadline = remaining <= readTimeoutNanos;
        receiveNanos = byDeadline ? remaining : readTimeoutNanos;
        due = now + receiveNanos;
      }
    }
    // watched until the call ends (no onComplete or onCancel comes before this returns)
    watch.add(this);
    if (missing != null) {
      // Decided on the headers: nothing of the request is read or held.
      respond(null, missing);
      return this;
    }
    // One message is the request; asking for a second one detects a client that sends too many.
    call.request(2);
    return this;
  }

  @Override
  public void check(long nowNanos) {
    int p = phase;
    if ((p == RECEIVING || p == WRITING) && nowNanos - due >= 0) {
      if (p == RECEIVING) {
        receiveTimedOut();
      } else {
        writeTimedOut(nowNanos);
      }
    }
  }

  @Override
  public void onMessage(Body body) {
    Body discard = body;
    Body extra = null;
    synchronized (this) {
      if (request == null && !invoked && !closed && !cancelled) {
        request = body;
        return;
      }
      if (request != null && !closed && !cancelled) {
        extra = request;
        request = null;
        closeLocked(
            Status.INTERNAL.withDescription(
                "too many request messages for unary procedure \"" + meta.procedure() + "\""),
            new Metadata());
      }
    }
    discard.release();
    if (extra != null) {
      extra.release();
    }
  }

  @Override
  public void onHalfClose() {
    Body body;
    synchronized (this) {
      halfClosed = true;
      if (closed || cancelled || invoked) {
        return;
      }
      if (request == null) {
        closeLocked(
            Status.INTERNAL.withDescription("half-closed without a request message"),
            new Metadata());
        return;
      }
      body = request;
      request = null;
      invoked = true;
      phase = HANDLING; // received in time: from here the dispatcher keeps the deadline
    }
    CompletableFuture<Response> f =
        InboundCalls.handle(handler, Request.of(meta, body), body::release);
    boolean cancelNow;
    synchronized (this) {
      cancelNow = cancelled;
      if (!cancelNow) {
        result = f;
      }
    }
    if (cancelNow) {
      f.cancel(false);
    }
    f.whenComplete(this); // accept: the handler's result, answered
  }

  @Override
  public void onReady() {
    // Without the lock: the event loop must not wait for a handler thread that holds it while it
    // copies the response into the framer. A stale write at worst pushes a deadline that the watch
    // reads as progress once more.
    if (phase == WRITING) {
      // the response is being written: it made progress, so its write timeout starts again
      due = System.nanoTime() + writeTimeoutNanos;
    }
  }

  @Override
  public void onComplete() {
    boolean resetNow;
    synchronized (this) {
      complete = true;
      phase = DONE;
      // Netty may keep a closed stream, and with it this listener, reachable until the connection
      // next writes: hold on to nothing large (the response) once the call is over.
      result = null;
      resetNow = resetWhenWritten && !halfClosed;
    }
    watch.remove(this);
    if (resetNow) {
      // The status is written; grpc-java cancels the call's context only after this returns, so the
      // reset still reaches the stream, which it closes: the client stops sending.
      reset.reset("request not received in time");
    }
  }

  @Override
  public void onCancel() {
    Body pending;
    CompletableFuture<Response> f;
    synchronized (this) {
      cancelled = true;
      phase = DONE;
      pending = request;
      request = null;
      f = result;
      result = null; // (see onComplete)
    }
    watch.remove(this);
    if (pending != null) {
      pending.release();
    }
    if (f != null) {
      f.cancel(false);
    }
  }

  /** The deadline or the read timeout came before the whole request: the call ends here. */
  private void receiveTimedOut() {
    Body pending;
    synchronized (this) {
      if (phase != RECEIVING || invoked || closed || cancelled) {
        return;
      }
      pending = request;
      request = null;
      // once the status is written (onComplete), the stream is reset if the client is still sending
      resetWhenWritten = true;
      String waited = GoDurations.format(Duration.ofNanos(receiveNanos));
      YarpcException e =
          byDeadline
              ? YarpcException.of(
                  Code.DEADLINE_EXCEEDED,
                  "call to procedure \"%s\" of service \"%s\" from caller \"%s\" timed out after %s"
                      + " before its request arrived",
                  meta.procedure(),
                  meta.service(),
                  meta.caller(),
                  waited)
              : YarpcException.of(
                  Code.DEADLINE_EXCEEDED,
                  "request for procedure \"%s\" of service \"%s\" from caller \"%s\" did not arrive"
                      + " within the read timeout of %s",
                  meta.procedure(),
                  meta.service(),
                  meta.caller(),
                  waited);
      respondLocked(null, e);
    }
    if (pending != null) {
      pending.release();
    }
  }

  /** The response was not written within the write timeout: reset the stream, dropping what waits. */
  private void writeTimedOut(long nowNanos) {
    synchronized (this) {
      if (phase != WRITING || nowNanos - due < 0) {
        return; // it made progress meanwhile
      }
      phase = DONE;
    }
    reset.reset("response not written within the write timeout: the client does not read");
  }

  /** The handler's result: answers the call with it (the call is its own callback, one object less). */
  @Override
  public void accept(Response response, Throwable error) {
    respond(response, error);
  }

  private void respond(Response response, Throwable error) {
    Body body;
    synchronized (this) {
      body = respondLocked(response, error);
    }
    if (body != null) {
      body.release();
    }
  }

  /** Sends the response or the error, under the lock; returns the body to release, if any. */
  private Body respondLocked(Response response, Throwable error) {
    Body body = null;
    try {
      if (cancelled || closed) {
        return bodyOf(response, error);
      }
      Metadata trailers = Metadatas.responseTrailers(meta.service());
      YarpcException failure = error == null ? null : YarpcException.from(error);
      Response sent = failure == null ? response : failure.response();
      Metadata initial;
      if (sent != null) {
        body = sent.body();
        Metadatas.putResponse(trailers, sent, yarpcPeer);
        initial = Metadatas.initialMetadata(sent);
      } else {
        initial = new Metadata();
      }
      Status status = failure == null ? Status.OK : GrpcErrors.toStatus(failure, trailers, true);
      if (body != null && body.length() > maxSendMessageSize) {
        closeLocked(
            Status.RESOURCE_EXHAUSTED.withDescription(
                String.format(
                    "response message of %d bytes is larger than the maximum send size of %d bytes",
                    body.length(), maxSendMessageSize)),
            trailers);
        return body;
      }
      if (sent != null && sent.compression() != null) {
        compress(sent.compression());
      }
      // yarpc-go always sends the response message, also with an error status.
      call.sendHeaders(initial);
      Body message = body == null ? Body.empty() : body;
      body = null; // grpc-java owns it now: it closes the message stream, releasing the body
      try {
        call.sendMessage(message);
      } catch (RuntimeException e) {
        message.release(); // refused before grpc-java took it (release is idempotent)
        throw e;
      }
      closeLocked(status, trailers);
      return null;
    } catch (RuntimeException e) {
      if (!closed) {
        log.warn("failed to send the response of {}", meta, e);
        // the exception's text stays in the log, not on the wire
        closeLocked(
            Status.INTERNAL
                .withDescription("failed to send the response (the server logged it)")
                .withCause(e),
            new Metadata());
      }
      return body;
    }
  }

  /** Asks grpc-java to compress the response; a compressor it does not know is refused, and ignored. */
  private void compress(String compressor) {
    try {
      call.setCompression(compressor);
    } catch (IllegalArgumentException unknown) {
      // the response goes out uncompressed: compression is a wish, not a contract
    }
  }

  private static Body bodyOf(Response response, Throwable error) {
    if (response != null) {
      return response.body();
    }
    if (error != null) {
      Response partial = YarpcException.from(error).response();
      return partial == null ? null : partial.body();
    }
    return null;
  }

  /** Closes the call; from now on what it sent must be written within the write timeout. */
  private void closeLocked(Status status, Metadata trailers) {
    closed = true;
    if (!complete && !cancelled) {
      due = System.nanoTime() + writeTimeoutNanos;
      phase = WRITING;
    }
    call.close(status, trailers);
  }
}
