package io.yarpc.encoding.protobuf.internal;

import io.grpc.CallOptions;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.yarpc.encoding.EncodingErrors;
import io.yarpc.transport.Body;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;

/**
 * A unary grpc call over {@link io.yarpc.ClientConfig#call}: the one request message is sent when the
 * stub half-closes (on the stub's thread, so a current YARPC call's deadline and cancellation are
 * inherited); the response is decoded (byte access first) and its body released, then delivered as
 * {@code onHeaders} (its initial headers where the transport keeps them apart, else all its headers),
 * {@code onMessage} (when requested) and {@code onClose(OK)} with its {@linkplain Response#trailers()
 * trailers}. Failures become {@code onClose} with the mapped status ({@link ClientErrors}) and the
 * response headers that came with the error as trailers. {@link #cancel} cancels the YARPC call.
 */
final class UnaryClientCall<Q, R> extends ClientCallBase<Q, R> {
  private Metadata headers;

  /** Guarded by this. */
  private Q request;

  private boolean halfClosed;
  private int demand;
  private R response;
  private Metadata trailers;
  private boolean responseDelivered;
  private CompletableFuture<Response> sent;

  UnaryClientCall(
      Settings settings,
      MethodDescriptor<Q, R> method,
      CallOptions options,
      MessageCodec<Q> requestCodec,
      MessageCodec<R> responseCodec) {
    super(settings, method, options, requestCodec, responseCodec);
  }

  @Override
  public void start(Listener<R> responseListener, Metadata headers) {
    this.headers = headers;
    begin(responseListener, headers);
  }

  @Override
  public void request(int numMessages) {
    synchronized (this) {
      demand += numMessages;
    }
    serial.execute(this::deliverResponse);
  }

  @Override
  public void sendMessage(Q message) {
    synchronized (this) {
      if (halfClosed) {
        throw new IllegalStateException("call was half-closed");
      }
      if (request != null) {
        throw new IllegalStateException("a unary call sends one message");
      }
      request = message;
    }
  }

  @Override
  public void halfClose() {
    Q message;
    synchronized (this) {
      if (halfClosed) {
        throw new IllegalStateException("call was already half-closed");
      }
      halfClosed = true;
      message = request;
    }
    if (isClosed()) {
      return;
    }
    if (message == null) {
      closeWith(
          Status.INTERNAL.withDescription("a unary call needs one request message"),
          new Metadata());
      return;
    }
    RequestMeta meta = requestMeta(headers);
    Body body;
    try {
      body = requestCodec.encode(message, encoding);
    } catch (IOException | RuntimeException e) {
      fail(EncodingErrors.requestBodyEncodeError(meta, encoding, e));
      return;
    }
    tracers.started(headers);
    tracers.sent(body.length());
    CompletableFuture<Response> future;
    try {
      future = settings.config().call(Request.of(meta, body));
    } catch (RuntimeException e) {
      future = CompletableFuture.failedFuture(e);
    }
    synchronized (this) {
      sent = future;
    }
    future.whenComplete((r, e) -> completed(meta, r, e));
  }

  private void completed(RequestMeta meta, Response r, Throwable error) {
    // Decoded (the response, or an error's details) on the call's executor, as grpc-java's own
    // client does, not on the transport thread that completed the call: a large message would hold
    // up every other call on that connection.
    serial.execute(
        () -> {
          if (error != null) {
            fail(error);
          } else {
            receive(meta, r);
          }
        });
  }

  /** Decodes the response and hands it to the listener. Serial only; releases the response body. */
  private void receive(RequestMeta meta, Response r) {
    if (isClosed()) {
      r.body().release();
      return;
    }
    if (r.isApplicationError()) {
      fail(EncodingErrors.applicationError(r));
      return;
    }
    Metadata initial = HeaderMetadata.toMetadata(initialHeaders(r));
    tracers.headers(initial);
    R decoded;
    try {
      tracers.received(r.body().length());
      decoded = responseCodec.decode(r.body(), encoding);
    } catch (IOException | RuntimeException e) {
      fail(EncodingErrors.responseBodyDecodeError(meta, encoding, e));
      return;
    } finally {
      r.body().release();
    }
    withListener(l -> l.onHeaders(initial));
    synchronized (this) {
      trailers = HeaderMetadata.toMetadata(r.trailers());
      response =
          decoded; // only now, so a request() racing with us cannot deliver it before onHeaders
    }
    deliverResponse();
  }

  /**
   * The headers {@code onHeaders} gets: the response's initial headers where the transport keeps them
   * apart (gRPC, even when there are none), else — HTTP and TChannel have one set of headers — all of
   * them, which are also the trailers.
   */
  private static io.yarpc.transport.Headers initialHeaders(Response r) {
    return r.keepsInitialHeaders() ? r.initialHeaders() : r.headers();
  }

  /** Delivers the response once requested, then closes with OK and the trailers. Serial only. */
  private void deliverResponse() {
    R r;
    Metadata t;
    synchronized (this) {
      if (response == null || responseDelivered || demand <= 0) {
        return;
      }
      responseDelivered = true;
      demand--;
      r = response;
      t = trailers;
    }
    withListener(l -> l.onMessage(r));
    closeWith(Status.OK, t);
  }

  private void fail(Throwable error) {
    if (isClosed()) {
      ClientErrors.toGrpc(
          error, encoding, responseCodec.types()); // releases an attached response body
      return;
    }
    ClientErrors.Failure f = ClientErrors.toGrpc(error, encoding, responseCodec.types());
    closeWith(f.status(), f.trailers());
  }

  @Override
  public void cancel(String message, Throwable cause) {
    if (message == null && cause == null) {
      message = "cancelled with no message or cause";
    }
    CompletableFuture<Response> future;
    synchronized (this) {
      future = sent;
    }
    if (closeWith(Status.CANCELLED.withDescription(message).withCause(cause), new Metadata())
        && future != null) {
      future.cancel(false);
    }
  }

  @Override
  void cancelFromContext(Status status) {
    CompletableFuture<Response> future;
    synchronized (this) {
      future = sent;
    }
    if (closeWith(status, new Metadata()) && future != null) {
      future.cancel(false);
    }
  }

  @Override
  public synchronized boolean isReady() {
    return !halfClosed && !isClosed();
  }
}
