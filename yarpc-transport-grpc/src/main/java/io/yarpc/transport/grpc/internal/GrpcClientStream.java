package io.yarpc.transport.grpc.internal;

import static java.util.Objects.requireNonNull;

import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.Status;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.peer.PeerLease;
import io.yarpc.transport.Body;
import io.yarpc.transport.ClientStream;
import io.yarpc.transport.Headers;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.StreamMessage;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The client's end of a gRPC stream, and the grpc-java listener of its call. One shape serves client,
 * server and bidirectional streaming.
 *
 * <p>{@link #open} chooses a peer and starts the call; its future completes with the stream once
 * grpc-java reports the call ready (or the server's headers arrive), and fails when the call closes with
 * an error first. The request deadline, if any, bounds the whole stream.
 *
 * <p>Flow control: {@link #receive()} asks for exactly one message ({@code request(1)}); {@link #send}
 * completes when the call {@linkplain ClientCall#isReady() is ready} for the next message (or when the
 * call ends: the stream's outcome is then what receives report, and later sends fail with it). The end of
 * the stream is a {@code null} message when the server closed with OK; otherwise receives fail with the
 * status mapped as for unary calls.
 *
 * <p>Ownership: received messages belong to the caller; a message nobody waits for any more (after
 * {@link #cancel()}) is released here. Sent messages are handed to grpc-java, which releases them once
 * written or when the call ends; a message that cannot be sent is released at once. The peer lease is finished exactly once, when the call closes.
 *
 * <p>Thread-safety: every use of the {@link ClientCall} happens under this object's lock; futures are
 * completed outside it.
 */
final class GrpcClientStream extends ClientCall.Listener<Body> implements ClientStream {
  private final ClientCalls calls;
  private final RequestMeta meta;
  private final CompletableFuture<ClientStream> established = new CompletableFuture<>();
  private final CompletableFuture<Headers> headers = new CompletableFuture<>();

  private ClientCall<Body, Body> call; // guarded by this
  private PeerLease lease; // set before the call starts
  private CompletableFuture<StreamMessage> pendingReceive; // guarded by this
  private CompletableFuture<Void> pendingSend; // guarded by this
  private final ArrayDeque<Body> unclaimed = new ArrayDeque<>(1); // guarded by this: arrived, not received
  private int requested; // guarded by this: messages asked of grpc-java and not delivered yet
  private boolean halfClosed; // guarded by this
  private boolean cancelled; // guarded by this
  private boolean closed; // guarded by this
  private YarpcException closeError; // guarded by this; null when the server closed with OK

  private GrpcClientStream(ClientCalls calls, RequestMeta meta) {
    this.calls = calls;
    this.meta = meta;
  }

  /** Opens a stream for {@code meta}. */
  static CompletableFuture<ClientStream> open(ClientCalls calls, RequestMeta meta) {
    GrpcClientStream s = new GrpcClientStream(calls, meta);
    String fullMethodName;
    Metadata md;
    CompletableFuture<PeerLease> choice;
    try {
      fullMethodName = ClientCalls.fullMethodName(meta);
      md = Metadatas.requestMetadata(meta);
      choice = calls.chooser().choose(meta);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(YarpcException.from(e));
    }
    s.established.whenComplete((stream, error) -> {
      if (s.established.isCancelled()) {
        choice.cancel(false);
        s.cancel();
      }
    });
    choice.whenComplete((lease, error) -> {
      if (error != null) {
        s.established.completeExceptionally(YarpcException.from(error));
      } else {
        s.start(lease, fullMethodName, md);
      }
    });
    return s.established;
  }

  private void start(PeerLease chosen, String fullMethodName, Metadata md) {
    synchronized (this) {
      if (established.isDone() || cancelled) {
        chosen.finish(null);
        return;
      }
      lease = chosen;
      try {
        GrpcPeer peer = ClientCalls.grpcPeer(chosen.peer());
        call = peer.channel().newCall(calls.method(fullMethodName, true), calls.options(meta.deadline()));
      } catch (RuntimeException e) {
        YarpcException error = YarpcException.from(e);
        chosen.finish(error);
        established.completeExceptionally(error);
        return;
      }
      call.start(this, md);
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
  public CompletableFuture<StreamMessage> receive() {
    CompletableFuture<StreamMessage> f;
    synchronized (this) {
      if (pendingReceive != null && !pendingReceive.isDone()) {
        return CompletableFuture.failedFuture(new IllegalStateException("a receive is already pending"));
      }
      pendingReceive = null;
      Body ready = unclaimed.poll();
      if (ready != null) {
        return CompletableFuture.completedFuture(StreamMessage.of(ready));
      }
      if (closed) {
        return closeError == null ? CompletableFuture.completedFuture(null)
            : CompletableFuture.failedFuture(closeError);
      }
      if (cancelled) {
        return CompletableFuture.failedFuture(cancelledError());
      }
      f = new CompletableFuture<>();
      pendingReceive = f;
      if (requested == 0) { // a receive whose future was abandoned may have asked already
        requested++;
        call.request(1);
      }
    }
    return f;
  }

  @Override
  public CompletableFuture<Void> send(StreamMessage message) {
    requireNonNull(message, "message");
    Body body = message.body();
    boolean handedOver = false;
    try {
      synchronized (this) {
        if (pendingSend != null && !pendingSend.isDone()) {
          throw new IllegalStateException("a send is already pending: wait for its future first");
        }
        pendingSend = null;
        if (halfClosed) {
          return CompletableFuture.failedFuture(
              new IllegalStateException("cannot send on a stream after half-closing it"));
        }
        if (closed) {
          return CompletableFuture.failedFuture(closeError != null ? closeError : closedError());
        }
        if (cancelled) {
          return CompletableFuture.failedFuture(cancelledError());
        }
        if (calls.tooLarge(body)) {
          return CompletableFuture.failedFuture(calls.tooLarge("stream message", body.length()));
        }
        // From here grpc-java owns the body: it releases it once written, or when the call ends.
        call.sendMessage(body); // on failure the finally block releases it (release is idempotent)
        handedOver = true;
        if (call.isReady()) {
          return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> f = new CompletableFuture<>();
        pendingSend = f;
        return f;
      }
    } finally {
      if (!handedOver) {
        body.release();
      }
    }
  }

  @Override
  public void halfClose() {
    synchronized (this) {
      if (halfClosed || cancelled || closed) {
        return;
      }
      halfClosed = true;
      call.halfClose();
    }
  }

  @Override
  public void cancel() {
    CompletableFuture<StreamMessage> receive;
    CompletableFuture<Void> send;
    List<Body> orphans;
    synchronized (this) {
      if (cancelled) {
        return;
      }
      if (closed) { // nothing to cancel on the wire; messages nobody will receive now are released
        cancelled = true;
        orphans = List.copyOf(unclaimed);
        unclaimed.clear();
        for (Body orphan : orphans) {
          orphan.release();
        }
        return;
      }
      cancelled = true;
      receive = pendingReceive;
      send = pendingSend;
      pendingReceive = null;
      pendingSend = null;
      orphans = List.copyOf(unclaimed);
      unclaimed.clear();
      if (call != null) {
        call.cancel("stream cancelled by the client", null);
      }
    }
    YarpcException error = cancelledError();
    for (Body orphan : orphans) {
      orphan.release();
    }
    if (receive != null) {
      receive.completeExceptionally(error);
    }
    if (send != null) {
      send.completeExceptionally(error);
    }
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
    CompletableFuture<Void> f = null;
    synchronized (this) {
      if (pendingSend != null && !closed && !cancelled && call.isReady()) {
        f = pendingSend;
        pendingSend = null;
      }
    }
    if (f != null) {
      f.complete(null);
    }
  }

  @Override
  public void onMessage(Body body) {
    CompletableFuture<StreamMessage> f;
    synchronized (this) {
      requested = Math.max(0, requested - 1);
      f = pendingReceive;
      pendingReceive = null;
      if (f == null || f.isDone()) {
        if (!cancelled && !closed) {
          unclaimed.add(body); // the receive that asked for it was abandoned: keep it for the next one
          return;
        }
        f = null;
      }
    }
    if (f == null || !f.complete(StreamMessage.of(body))) {
      body.release();
    }
  }

  @Override
  public void onClose(Status status, Metadata trailers) {
    YarpcException error;
    CompletableFuture<StreamMessage> receive;
    CompletableFuture<Void> send;
    synchronized (this) {
      error = status.isOk() ? null : cancelled ? cancelledError() : GrpcErrors.fromStatus(status, trailers);
      closed = true;
      closeError = error;
      receive = pendingReceive;
      send = pendingSend;
      pendingReceive = null;
      pendingSend = null;
    }
    if (receive != null) {
      if (error == null) {
        receive.complete(null);
      } else {
        receive.completeExceptionally(error);
      }
    }
    if (send != null) {
      // The message was handed to grpc-java before the call ended; the stream's outcome is what receive
      // reports, and the next send fails with it.
      send.complete(null);
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
    return YarpcException.of(Code.CANCELLED, "stream for procedure \"%s\" of service \"%s\" was cancelled",
        meta.procedure(), meta.service());
  }

  private YarpcException closedError() {
    return YarpcException.of(Code.CANCELLED, "stream for procedure \"%s\" of service \"%s\" is closed",
        meta.procedure(), meta.service());
  }
}
