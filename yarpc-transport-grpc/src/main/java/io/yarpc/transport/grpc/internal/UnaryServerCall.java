package io.yarpc.transport.grpc.internal;

import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.Status;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.Handler;
import io.yarpc.transport.InboundCalls;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.util.concurrent.CompletableFuture;

/**
 * One inbound unary call (docs/spec/wire-grpc.md §4.4): receive exactly one message, invoke the handler once the
 * client half-closes, then always send a response message — the handler's body, the body of a response
 * attached to its error, or an empty one — followed by the status, with the response metadata in the
 * trailers ({@code rpc-service}, application headers, application-error keys, {@code rpc-error-name}).
 * A response's {@linkplain Response#initialHeaders() initial headers} go in the initial metadata (and, for
 * a YARPC peer, which reads only the trailers as yarpc-go does, in the trailers too), and its
 * {@linkplain Response#compression() compression} is asked of grpc-java.
 *
 * <p>Ownership: the received body is this call's until the handler is invoked, then the invocation's
 * (the dispatcher's handler releases it when the handler completes); a body received when none is wanted
 * is released at once. The response body (or the error's response body) is released once written, or at
 * once when the client has gone. A client that cancels cancels the handler's future.
 *
 * <p>Thread-safety: grpc-java serialises the listener callbacks; the handler's result arrives on any
 * thread. All use of the {@link ServerCall} happens under this object's lock, and the lock is never held
 * while completing or cancelling a future that others may listen to.
 */
final class UnaryServerCall extends ServerCall.Listener<Body> {
  private final ServerCall<Body, Body> call;
  private final RequestMeta meta;
  private final Handler<Request, Response> handler;
  private final long maxSendMessageSize;

  /** The caller sent {@code rpc-caller}: a YARPC peer, which reads response headers from the trailers. */
  private final boolean yarpcPeer;

  private Body request; // guarded by this
  private boolean invoked; // guarded by this
  private boolean cancelled; // guarded by this: the client went away
  private boolean closed; // guarded by this: we closed the call
  private CompletableFuture<Response> result; // guarded by this

  UnaryServerCall(
      ServerCall<Body, Body> call,
      RequestMeta meta,
      Handler<Request, Response> handler,
      long maxSendMessageSize,
      boolean yarpcPeer) {
    this.yarpcPeer = yarpcPeer;
    this.call = call;
    this.meta = meta;
    this.handler = handler;
    this.maxSendMessageSize = maxSendMessageSize;
  }

  UnaryServerCall start() {
    // One message is the request; asking for a second one detects a client that sends too many.
    call.request(2);
    return this;
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
    }
    CompletableFuture<Response> f =
        InboundCalls.handle(handler, Request.of(meta, body), body::release);
    boolean cancelNow;
    synchronized (this) {
      result = f;
      cancelNow = cancelled;
    }
    if (cancelNow) {
      f.cancel(false);
    }
    f.whenComplete(this::respond);
  }

  @Override
  public void onCancel() {
    Body pending;
    CompletableFuture<Response> f;
    synchronized (this) {
      cancelled = true;
      pending = request;
      request = null;
      f = result;
    }
    if (pending != null) {
      pending.release();
    }
    if (f != null) {
      f.cancel(false);
    }
  }

  private void respond(Response response, Throwable error) {
    Body body = null;
    try {
      synchronized (this) {
        if (cancelled || closed) {
          body = bodyOf(response, error);
          return;
        }
        Metadata trailers = new Metadata();
        if (!meta.service().isEmpty()) {
          trailers.put(Metadatas.key(Metadatas.SERVICE), meta.service());
        }
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
          return;
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
      }
    } catch (RuntimeException e) {
      synchronized (this) {
        if (!closed) {
          closeLocked(
              Status.INTERNAL
                  .withDescription("failed to send response: " + e.getMessage())
                  .withCause(e),
              new Metadata());
        }
      }
    } finally {
      if (body != null) {
        body.release();
      }
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

  private void closeLocked(Status status, Metadata trailers) {
    closed = true;
    call.close(status, trailers);
  }
}
