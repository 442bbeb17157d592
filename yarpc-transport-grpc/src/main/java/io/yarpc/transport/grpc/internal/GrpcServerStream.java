package io.yarpc.transport.grpc.internal;

import static java.util.Objects.requireNonNull;

import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.Status;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.Handler;
import io.yarpc.transport.Headers;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.ServerStream;
import io.yarpc.transport.StreamMessage;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The server's end of a gRPC stream (client, server or bidirectional streaming: gRPC does not tell them
 * apart on the wire), and the grpc-java listener of its call.
 *
 * <p>Flow control: {@link #receive()} asks grpc-java for exactly one message ({@code request(1)}), so
 * nothing is buffered beyond what the handler asked for; {@link #send} completes its future only when the
 * call {@linkplain ServerCall#isReady() is ready} again (at once or on {@code onReady}).
 *
 * <p>Ownership: a received message belongs to the handler, which releases it; a message that arrives
 * when nobody waits for it any more (a cancelled receive, a closed stream) is released here. A sent
 * message is handed to grpc-java, which releases it once written (or dropped); one that cannot be sent
 * is released at once.
 *
 * <p>The stream ends when the handler's future completes: normally with status OK, exceptionally with the
 * error's status (its name prefixed to the message, details in {@code grpc-status-details-bin}). If the
 * client cancels, pending and later operations fail with {@code cancelled} and the handler's future is
 * cancelled.
 *
 * <p>Thread-safety: every use of the {@link ServerCall} happens under this object's lock; futures are
 * completed outside it.
 */
final class GrpcServerStream extends ServerCall.Listener<Body> implements ServerStream {
  private final ServerCall<Body, Body> call;
  private final RequestMeta meta;
  private final long maxSendMessageSize;

  private CompletableFuture<StreamMessage> pendingReceive; // guarded by this
  private CompletableFuture<Void> pendingSend; // guarded by this
  private final ArrayDeque<Body> unclaimed = new ArrayDeque<>(1); // guarded by this: arrived, not received
  private int requested; // guarded by this: messages asked of grpc-java and not delivered yet
  private boolean headersSent; // guarded by this
  private boolean halfClosed; // guarded by this: the client sends no more
  private boolean cancelled; // guarded by this: the client went away
  private boolean closed; // guarded by this: the handler ended the stream
  private CompletableFuture<Void> result; // guarded by this

  GrpcServerStream(ServerCall<Body, Body> call, RequestMeta meta, long maxSendMessageSize) {
    this.call = call;
    this.meta = meta;
    this.maxSendMessageSize = maxSendMessageSize;
  }

  /** Runs {@code handler} on this stream; returns the listener grpc-java delivers the call's events to. */
  GrpcServerStream start(Handler<ServerStream, Void> handler) {
    CompletableFuture<Void> f;
    try {
      f = handler.handle(this);
    } catch (RuntimeException | Error e) {
      f = CompletableFuture.failedFuture(e);
    }
    if (f == null) {
      f = CompletableFuture.failedFuture(new NullPointerException("handler returned no future"));
    }
    boolean cancelNow;
    synchronized (this) {
      result = f;
      cancelNow = cancelled;
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
    CompletableFuture<StreamMessage> f;
    synchronized (this) {
      if (pendingReceive != null && !pendingReceive.isDone()) {
        return CompletableFuture.failedFuture(new IllegalStateException("a receive is already pending"));
      }
      pendingReceive = null;
      if (cancelled) {
        return CompletableFuture.failedFuture(cancelledError());
      }
      Body ready = unclaimed.poll();
      if (ready != null) {
        return CompletableFuture.completedFuture(StreamMessage.of(ready));
      }
      if (halfClosed) {
        return CompletableFuture.completedFuture(null);
      }
      if (closed) {
        return CompletableFuture.failedFuture(closedError());
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
        if (cancelled) {
          return CompletableFuture.failedFuture(cancelledError());
        }
        if (closed) {
          return CompletableFuture.failedFuture(closedError());
        }
        if (body.length() > maxSendMessageSize) {
          return CompletableFuture.failedFuture(YarpcException.of(Code.RESOURCE_EXHAUSTED,
              "stream message of %d bytes is larger than the maximum send size of %d bytes",
              body.length(), maxSendMessageSize));
        }
        if (!headersSent) {
          headersSent = true;
          call.sendHeaders(new Metadata());
        }
        // From here grpc-java owns the body: it closes the message stream, releasing the body.
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
  public void sendHeaders(Headers headers) {
    requireNonNull(headers, "headers");
    Metadata md = Metadatas.streamHeaders(headers);
    synchronized (this) {
      if (headersSent) {
        throw new IllegalStateException("stream headers were already sent");
      }
      if (closed) {
        throw new IllegalStateException("the stream is closed");
      }
      if (cancelled) {
        throw cancelledError();
      }
      headersSent = true;
      call.sendHeaders(md);
    }
  }

  // ---------------------------------------------------------------------------------------------------
  // grpc-java call events

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
  public void onHalfClose() {
    CompletableFuture<StreamMessage> f;
    synchronized (this) {
      halfClosed = true;
      f = pendingReceive;
      pendingReceive = null;
    }
    if (f != null) {
      f.complete(null);
    }
  }

  @Override
  public void onReady() {
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
  public void onCancel() {
    CompletableFuture<StreamMessage> receive;
    CompletableFuture<Void> send;
    CompletableFuture<Void> handler;
    List<Body> orphans;
    synchronized (this) {
      if (cancelled) {
        return;
      }
      cancelled = true;
      receive = pendingReceive;
      send = pendingSend;
      pendingReceive = null;
      pendingSend = null;
      orphans = drainUnclaimed();
      handler = closed ? null : result;
    }
    failPending(receive, send, orphans, cancelledError());
    if (handler != null) {
      handler.cancel(false);
    }
  }

  /** The handler's future completed: end the call with its status. */
  private void finish(Void ignored, Throwable error) {
    CompletableFuture<StreamMessage> receive;
    CompletableFuture<Void> send;
    List<Body> orphans;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      receive = pendingReceive;
      send = pendingSend;
      pendingReceive = null;
      pendingSend = null;
      orphans = drainUnclaimed();
      if (!cancelled) {
        Metadata trailers = new Metadata();
        Status status = error == null ? Status.OK
            : GrpcErrors.toStatus(YarpcException.from(error), trailers, false);
        try {
          call.close(status, trailers);
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
    failPending(receive, send, orphans, closedError());
  }

  private List<Body> drainUnclaimed() {
    List<Body> orphans = List.copyOf(unclaimed);
    unclaimed.clear();
    return orphans;
  }

  private static void failPending(CompletableFuture<StreamMessage> receive, CompletableFuture<Void> send,
      List<Body> orphans, YarpcException error) {
    for (Body orphan : orphans) {
      orphan.release();
    }
    if (receive != null) {
      receive.completeExceptionally(error);
    }
    if (send != null) {
      send.completeExceptionally(error);
    }
  }

  private YarpcException cancelledError() {
    return YarpcException.of(Code.CANCELLED, "stream for procedure \"%s\" of service \"%s\" from caller "
        + "\"%s\" was cancelled", meta.procedure(), meta.service(), meta.caller());
  }

  private YarpcException closedError() {
    return YarpcException.of(Code.CANCELLED, "stream for procedure \"%s\" of service \"%s\" is closed",
        meta.procedure(), meta.service());
  }
}
