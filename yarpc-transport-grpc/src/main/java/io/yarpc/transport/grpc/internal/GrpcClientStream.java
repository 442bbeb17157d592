package io.yarpc.transport.grpc.internal;

import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.Status;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.peer.PeerCalls;
import io.yarpc.peer.PeerLease;
import io.yarpc.transport.Body;
import io.yarpc.transport.ClientStream;
import io.yarpc.transport.Headers;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.StreamMessage;
import java.util.concurrent.CompletableFuture;

/**
 * The client's end of a gRPC stream, and the grpc-java listener of its call. One shape serves client,
 * server and bidirectional streaming.
 *
 * <p>{@link #open} chooses a peer and starts the call; its future completes with the stream once
 * grpc-java reports the call ready (or the server's headers arrive), and fails when the call closes with
 * an error first. The request deadline, if any, bounds the whole stream.
 *
 * <p>Flow control ({@link StreamFlow}): {@link #receive()} asks for exactly one message ({@code
 * request(1)}); {@link #send} completes when the call {@linkplain ClientCall#isReady() is ready} for the
 * next message (or when the call ends: the stream's outcome is then what receives report, and later sends
 * fail with it). Messages that arrived before the call closed are still received; after them, the end of
 * the stream is a {@code null} message when the server closed with OK; otherwise receives fail with the
 * status mapped as for unary calls.
 *
 * <p>Ownership: received messages belong to the caller; a message nobody waits for any more (after
 * {@link #cancel()}) is released here. Sent messages are handed to grpc-java, which releases them once
 * written or when the call ends; a message that cannot be sent is released at once. The peer lease is
 * finished exactly once, when the call closes.
 *
 * <p>Thread-safety: every use of the {@link ClientCall} happens under this object's lock; futures are
 * completed outside it.
 */
final class GrpcClientStream extends ClientCall.Listener<Body> implements ClientStream {
  private final ClientCalls calls;
  private final RequestMeta meta;
  private final CompletableFuture<ClientStream> established = new CompletableFuture<>();
  private final CompletableFuture<Headers> headers = new CompletableFuture<>();
  private final CompletableFuture<Headers> trailers = new CompletableFuture<>();

  private final StreamFlow flow; // cancelled: by cancel(); closed: grpc-java closed the call

  private ClientCall<Body, Body> call; // guarded by this
  private PeerLease lease; // set before the call starts
  private boolean halfClosed; // guarded by this
  private YarpcException closeError; // guarded by this; null when the server closed with OK

  private GrpcClientStream(ClientCalls calls, RequestMeta meta) {
    this.calls = calls;
    this.meta = meta;
    this.flow =
        new StreamFlow(
            this, new Wire(), calls.maxSendMessageSize(), this::receiveEnd, this::sendRefusal);
  }

  /** Opens a stream for {@code meta}. */
  static CompletableFuture<ClientStream> open(ClientCalls calls, RequestMeta meta) {
    GrpcClientStream s = new GrpcClientStream(calls, meta);
    String fullMethodName;
    Metadata md;
    try {
      fullMethodName = ClientCalls.fullMethodName(meta);
      md = Metadatas.requestMetadata(meta);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(YarpcException.from(e));
    }
    s.established.whenComplete(
        (stream, error) -> {
          if (s.established.isCancelled()) {
            s.cancel();
          }
        });
    PeerCalls.choose(
        calls.chooser(),
        meta,
        s.established,
        () -> {},
        lease -> s.start(lease, fullMethodName, md));
    return s.established;
  }

  private void start(PeerLease chosen, String fullMethodName, Metadata md) {
    synchronized (this) {
      if (established.isDone() || flow.cancelledLocked()) {
        chosen.abandon();
        return;
      }
      lease = chosen;
      try {
        GrpcPeer peer = ClientCalls.grpcPeer(chosen.peer());
        call =
            peer.startCall(
                calls.method(fullMethodName, true), calls.options(meta.deadline()), this, md);
      } catch (RuntimeException e) { // nothing was sent: no onClose will follow
        YarpcException error = YarpcException.from(e).withUnprocessed();
        chosen.finish(error);
        trailers.complete(Headers.empty());
        established.completeExceptionally(error);
      }
    }
  }

  @Override
  public RequestMeta meta() {
    return meta;
  }

  @Override
  public CompletableFuture<Headers> headers() {
    return headers;
  }

  @Override
  public CompletableFuture<Headers> trailers() {
    return trailers;
  }

  @Override
  public CompletableFuture<StreamMessage> receive() {
    return flow.receive();
  }

  /** How a receive that finds nothing unclaimed ends: as the call closed, or cancelled; else it waits. */
  private CompletableFuture<StreamMessage> receiveEnd() {
    if (flow.closedLocked()) {
      return closeError == null
          ? CompletableFuture.completedFuture(null)
          : CompletableFuture.failedFuture(closeError);
    }
    if (flow.cancelledLocked()) {
      return CompletableFuture.failedFuture(cancelledError());
    }
    return null;
  }

  @Override
  public CompletableFuture<Void> send(StreamMessage message) {
    return flow.send(message);
  }

  /** Why a message may not be sent now, or null. */
  private Throwable sendRefusal(Body body) {
    if (halfClosed) {
      return new IllegalStateException("cannot send on a stream after half-closing it");
    }
    if (flow.closedLocked()) {
      return closeError != null ? closeError : StreamFlow.closedError(meta);
    }
    if (flow.cancelledLocked()) {
      return cancelledError();
    }
    return null;
  }

  @Override
  public void halfClose() {
    synchronized (this) {
      if (halfClosed || flow.cancelledLocked() || flow.closedLocked()) {
        return;
      }
      halfClosed = true;
      call.halfClose();
    }
  }

  @Override
  public void cancel() {
    StreamFlow.Detached detached;
    synchronized (this) {
      if (flow.cancelledLocked()) {
        return;
      }
      boolean closed = flow.closedLocked();
      detached = flow.cancelLocked(); // takes no futures once closed: onClose took them
      if (closed) { // nothing to cancel on the wire; messages nobody will receive now are released
        detached.releaseOrphans();
        return;
      }
      if (call != null) {
        call.cancel("stream cancelled by the client", null);
      }
    }
    YarpcException error = cancelledError();
    trailers.complete(Headers.empty()); // before the receives that report the end, as promised
    detached.fail(error);
    established.completeExceptionally(error);
  }

  // ---------------------------------------------------------------------------------------------------
  // grpc-java call events

  @Override
  public void onHeaders(Metadata md) {
    try {
      headers.complete(Metadatas.responseHeaders(md, null));
    } catch (YarpcException e) {
      headers.completeExceptionally(e);
    }
    established.complete(this);
  }

  @Override
  public void onReady() {
    established.complete(this);
    flow.onReady();
  }

  @Override
  public void onMessage(Body body) {
    flow.onMessage(body);
  }

  @Override
  public void onClose(Status status, Metadata trailers) {
    Headers received;
    try {
      received = Metadatas.responseHeaders(trailers, null);
    } catch (YarpcException e) {
      received = Headers.empty(); // a repeated key: the status still matters more
    }
    this.trailers.complete(received); // before the receive that reports the end
    YarpcException error;
    StreamFlow.Detached detached;
    synchronized (this) {
      error =
          status.isOk()
              ? null
              : flow.cancelledLocked()
                  ? cancelledError()
                  : GrpcErrors.fromStatus(
                      status, trailers, lease == null ? null : lease.peer().identifier());
      closeError = error;
      detached = flow.closeLocked(false); // what arrived before the close is still received
    }
    CompletableFuture<StreamMessage> receive = detached.receive();
    if (receive != null) {
      if (error == null) {
        receive.complete(null);
      } else {
        receive.completeExceptionally(error);
      }
    }
    if (detached.send() != null) {
      // The message was handed to grpc-java before the call ended; the stream's outcome is what
      // receive reports, and the next send fails with it.
      detached.send().complete(null);
    }
    headers.complete(Headers.empty());
    if (error != null) {
      established.completeExceptionally(error);
    } else {
      established.complete(this);
    }
    PeerLease l = lease;
    if (l != null) {
      l.finish(error);
    }
  }

  private YarpcException cancelledError() {
    return YarpcException.of(
        Code.CANCELLED,
        "stream for procedure \"%s\" of service \"%s\" was cancelled",
        meta.procedure(),
        meta.service());
  }

  /** The flow's view of {@link #call}, used under this object's lock once the call started. */
  private final class Wire implements StreamFlow.Wire {
    @Override
    public void request(int count) {
      call.request(count);
    }

    @Override
    public void sendMessage(Body body) {
      call.sendMessage(body);
    }

    @Override
    public boolean isReady() {
      return call.isReady();
    }
  }
}
