package io.yarpc.encoding.protobuf.internal;

import io.grpc.Metadata;
import io.grpc.Status;
import io.yarpc.Call;
import io.yarpc.encoding.EncodingErrors;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * A unary call as a grpc {@link io.grpc.ServerCall}: the decoded request is delivered once the handler
 * asks for it, followed by half-close; the one response message, the headers sent and the status given
 * to {@link #close} become the YARPC response (or error) of {@link #result()}.
 *
 * <p>With aliasing, the request's pooled array is held by the call until its result completes and by the
 * response body until the transport releases it.
 */
final class UnaryServerCall<Q, R> extends ServerCallBase<Q, R> {
  private final Q request;
  private final Lease lease;
  private final CompletableFuture<Response> result = new CompletableFuture<>();

  /** Guarded by this. */
  private int demand;

  private boolean delivered;
  private Metadata sentHeaders;
  private R response;
  private boolean closed;
  private volatile boolean cancelled;

  UnaryServerCall(
      MethodBinding<Q, R> method,
      RequestMeta meta,
      Call call,
      Executor callbacks,
      Q request,
      Lease lease) {
    super(method, meta, call, callbacks);
    this.request = request;
    this.lease = lease;
    if (lease != null) {
      result.whenComplete((r, e) -> lease.release());
    }
  }

  CompletableFuture<Response> result() {
    return result;
  }

  @Override
  public void request(int numMessages) {
    boolean deliver;
    synchronized (this) {
      demand += numMessages;
      deliver = !delivered && demand > 0;
      if (deliver) {
        delivered = true;
      }
    }
    if (deliver) {
      serial.step(Step.DELIVER);
    }
  }

  @Override
  void deliver(Listener<Q> listener) {
    listener.onMessage(request);
    listener.onHalfClose();
  }

  @Override
  public void sendHeaders(Metadata headers) {
    synchronized (this) {
      if (closed) {
        throw new IllegalStateException("call is closed");
      }
      if (sentHeaders != null) {
        throw new IllegalStateException("sendHeaders has already been called");
      }
      sentHeaders = headers;
    }
  }

  @Override
  public void sendMessage(R message) {
    boolean tooMany;
    synchronized (this) {
      if (closed) {
        throw new IllegalStateException("call is closed");
      }
      tooMany = response != null;
      if (!tooMany) {
        response = message;
      }
    }
    if (tooMany) {
      close(Status.INTERNAL.withDescription("Too many responses"), new Metadata());
    }
  }

  @Override
  public void close(Status status, Metadata trailers) {
    R message;
    Metadata headers;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      message = response;
      headers = sentHeaders;
    }
    if (status.isOk() && message == null) {
      status = Status.INTERNAL.withDescription("Completed without a response");
    }
    if (status.isOk()) {
      try {
        result.complete(
            Response.builder()
                .initialHeaders(HeaderMetadata.toHeaders(headers))
                .headers(responseHeaders(trailers))
                .compression(compression())
                .body(responseBody(message))
                .build());
      } catch (IOException | RuntimeException e) {
        result.completeExceptionally(EncodingErrors.responseBodyEncodeError(meta, encoding, e));
      }
    } else {
      Body partial = null;
      if (message != null) {
        try {
          partial = responseBody(message);
        } catch (IOException | RuntimeException e) {
          partial = null; // the error matters more than the message that went with it
        }
      }
      result.completeExceptionally(
          ServerErrors.fromStatus(
              status,
              trailers,
              meta,
              encoding,
              method.types(),
              HeaderMetadata.toHeaders(headers),
              responseHeaders(null),
              partial,
              true));
    }
    endListener(true);
  }

  private Body responseBody(R message) throws IOException {
    Body body = method.encodeResponse(message, encoding);
    return lease == null ? body : lease.hold(body);
  }

  @Override
  void onCancelled(YarpcException reason) {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    cancelled = true;
    result.completeExceptionally(reason);
    endListener(false);
  }

  @Override
  synchronized boolean isClosed() {
    return closed;
  }

  @Override
  public boolean isCancelled() {
    return cancelled;
  }

  @Override
  public synchronized boolean isReady() {
    return !closed;
  }
}
