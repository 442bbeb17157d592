package io.yarpc.transport.grpc.internal;

import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.Status;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.Checks;
import io.yarpc.peer.PeerCalls;
import io.yarpc.peer.PeerLease;
import io.yarpc.transport.Body;
import io.yarpc.transport.Headers;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.net.ConnectException;
import java.util.concurrent.CompletableFuture;

/**
 * One outbound unary call (docs/spec/wire-grpc.md §4.4, client side): choose a peer, send the request message and
 * half-close, then build the response from the one response message and the headers and trailers.
 *
 * <p>A non-OK status becomes a {@link YarpcException} (code by number, name from {@code rpc-error-name},
 * details from {@code grpc-status-details-bin}); when a response message came with it, the exception
 * carries the response, whose body the catcher owns. A successful response whose {@code rpc-service}
 * trailer names another service fails with {@code internal}; multi-valued metadata with
 * {@code invalid-argument}.
 *
 * <p>Ownership: the request body is handed to grpc-java, which releases it (through
 * {@link BodyMarshaller}'s stream) once written or when the call fails; it is released here when the call
 * fails before that. The response body goes to the caller through the future; a body that arrives after the future was cancelled, or one too many, is released here. The peer lease is finished
 * exactly once, when the call closes.
 */
final class UnaryClientCall extends ClientCall.Listener<Body> {
  private final ClientCalls calls;
  private final RequestMeta meta;
  private final Body requestBody;
  private final CompletableFuture<Response> result = new CompletableFuture<>();

  private ClientCall<Body, Body> call; // guarded by this
  private PeerLease lease; // set before the call starts

  // Listener state: grpc-java serialises the callbacks.
  private Metadata responseHeaders;
  private Body message;
  private boolean tooManyMessages;

  private UnaryClientCall(ClientCalls calls, Request request) {
    this.calls = calls;
    this.meta = request.meta();
    this.requestBody = request.body();
  }

  /** Sends {@code request}; the outbound owns its body from now on. */
  static CompletableFuture<Response> start(ClientCalls calls, Request request) {
    UnaryClientCall c = new UnaryClientCall(calls, request);
    String fullMethodName;
    Metadata headers;
    try {
      fullMethodName = ClientCalls.fullMethodName(c.meta);
      headers = Metadatas.requestMetadata(c.meta);
      if (calls.tooLarge(c.requestBody)) {
        throw calls.tooLarge("request message", c.requestBody.length());
      }
    } catch (RuntimeException e) {
      c.requestBody.release();
      return CompletableFuture.failedFuture(YarpcException.from(e));
    }
    c.result.whenComplete(
        (r, e) -> {
          if (c.result.isCancelled()) {
            c.cancelCall();
          }
        });
    PeerCalls.choose(
        calls.chooser(),
        c.meta,
        c.result,
        c.requestBody::release,
        lease -> c.send(lease, fullMethodName, headers));
    return c.result;
  }

  private void send(PeerLease chosen, String fullMethodName, Metadata headers) {
    // Until sendMessage hands it to grpc-java, the request body is ours to release. Afterwards
    // grpc-java owns the message stream (it may hold it until the connection is up) and closes it,
    // which releases the body, once written or when the call fails.
    boolean handedOver = false;
    try {
      synchronized (this) {
        if (result.isDone()) {
          chosen.abandon();
          return;
        }
        lease = chosen;
        try {
          GrpcPeer peer = ClientCalls.grpcPeer(chosen.peer());
          call =
              peer.startCall(
                  calls.method(fullMethodName, false),
                  calls.options(meta.deadline()),
                  this,
                  headers);
        } catch (RuntimeException e) { // nothing was sent: no onClose will follow
          YarpcException error = YarpcException.from(e).withUnprocessed();
          chosen.finish(error);
          result.completeExceptionally(error);
          return;
        }
        try {
          call.request(2); // the response, and one more to detect a server that sends too many
          call.sendMessage(requestBody);
          handedOver = true;
          call.halfClose();
        } catch (RuntimeException e) {
          call.cancel("failed to send the request", e); // onClose finishes the call
        }
      }
    } finally {
      if (!handedOver) {
        requestBody.release();
      }
    }
  }

  private void cancelCall() {
    synchronized (this) {
      if (call != null) {
        call.cancel("call cancelled by the caller", null);
      }
    }
  }

  @Override
  public void onHeaders(Metadata headers) {
    responseHeaders = headers;
  }

  @Override
  public void onMessage(Body body) {
    if (message != null || result.isDone()) {
      tooManyMessages |= message != null;
      body.release();
      return;
    }
    message = body;
  }

  @Override
  public void onClose(Status status, Metadata trailers) {
    Body body = message;
    message = null;
    YarpcException failure = null;
    try {
      if (tooManyMessages) {
        throw YarpcException.of(
            Code.INTERNAL,
            "too many response messages for unary procedure \"%s\"",
            meta.procedure());
      }
      Headers initial = Metadatas.responseHeaders(responseHeaders, null);
      Headers trailing = Metadatas.responseHeaders(trailers, null);
      Response response = body == null ? null : response(initial, trailing, body, trailers);
      if (status.isOk()) {
        if (response == null) {
          throw YarpcException.of(
              Code.INTERNAL, "no response message for unary procedure \"%s\"", meta.procedure());
        }
        Checks.responseService(meta, Metadatas.single(trailers, Metadatas.SERVICE));
        if (result.complete(response)) {
          body = null;
        }
      } else {
        PeerLease chosen = lease;
        failure =
            GrpcErrors.fromStatus(
                status, trailers, chosen == null ? null : chosen.peer().identifier());
        if (status.getCode() == Status.Code.UNAVAILABLE
            && responseHeaders == null
            && status.getCause() instanceof ConnectException) {
          // grpc-java could not open a connection to the peer: the request never left (a server's
          // REFUSED_STREAM and GOAWAY are retried by grpc-java itself, transparently)
          failure = failure.withUnprocessed();
        }
        if (response == null && !(initial.isEmpty() && trailing.isEmpty())) {
          response = response(initial, trailing, Body.empty(), trailers); // the error's headers
        }
        if (response != null) {
          failure = failure.withResponse(response);
        }
        if (result.completeExceptionally(failure)) {
          body = null;
        }
      }
    } catch (YarpcException e) {
      failure = e;
      result.completeExceptionally(e);
    } finally {
      if (body != null) {
        body.release();
      }
      PeerLease l = lease;
      if (l != null) {
        l.finish(failure);
      }
    }
  }

  private static Response response(
      Headers initial, Headers trailing, Body body, Metadata trailers) {
    Response.Builder b = Response.builder().initialHeaders(initial).headers(trailing).body(body);
    if (Metadatas.isApplicationError(trailers)) {
      io.yarpc.errors.ApplicationErrorMeta meta = Metadatas.applicationErrorMeta(trailers);
      if (meta == io.yarpc.errors.ApplicationErrorMeta.EMPTY) {
        b.applicationError(true);
      } else {
        b.applicationError(meta);
      }
    }
    return b.build();
  }
}
