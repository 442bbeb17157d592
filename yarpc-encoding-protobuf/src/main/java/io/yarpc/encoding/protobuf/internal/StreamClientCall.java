package io.yarpc.encoding.protobuf.internal;

import io.grpc.CallOptions;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.yarpc.encoding.EncodingErrors;
import io.yarpc.transport.Body;
import io.yarpc.transport.ClientStream;
import io.yarpc.transport.Headers;
import io.yarpc.transport.MessageStream;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.StreamMessage;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;

/**
 * A client, server or bidirectional streaming grpc call over {@link io.yarpc.ClientConfig#callStream},
 * with flow control end to end:
 *
 * <ul>
 *   <li>{@code start} opens the stream (on the stub's thread: a current YARPC call's deadline and
 *       cancellation are inherited).
 *   <li>Sending: messages are encoded at once and sent one at a time ({@link Outbox}), each after the
 *       previous {@code send} completed; {@link #isReady()} is false while any wait, and {@code onReady}
 *       follows when it turns true again. {@link #halfClose()} takes effect after the waiting messages.
 *   <li>Receiving: each message the listener {@linkplain #request asks for} is one {@link
 *       ClientStream#receive()}; decoded, released, delivered. The server's stream headers come first
 *       ({@code onHeaders}); end of stream is {@code onClose(OK)} with the server's trailers, a failure
 *       {@code onClose} with the mapped status (and the trailers).
 *   <li>{@link #cancel} cancels the stream.
 * </ul>
 */
final class StreamClientCall<Q, R> extends ClientCallBase<Q, R> {
  private final Object lock = new Object();

  /** Guarded by lock. */
  private ClientStream stream;

  private CompletableFuture<ClientStream> opening;
  private final Outbox outbox =
      new Outbox(lock) {
        @Override
        MessageStream streamLocked() {
          return stream;
        }

        @Override
        Runnable drainedLocked() {
          if (halfCloseRequested && !halfCloseSent) {
            halfCloseSent = true;
            return stream::halfClose;
          }
          return null;
        }

        @Override
        boolean dropTaken() {
          return isClosed(); // e.g. the server ended the stream: what still waits is dropped
        }

        @Override
        void sendFailed(Throwable error) {
          dropAll();
          // The stream failed; its status reaches the listener through receive (or here if none is
          // asked for).
          serial.execute(
              () -> {
                if (!receiving) {
                  fail(error);
                }
              });
        }

        @Override
        void ready() {
          callback(l -> l.onReady());
        }
      };
  private boolean halfCloseRequested;
  private boolean halfCloseSent;
  private RequestMeta meta;

  // Receive side: serial only.
  private int demand;
  private boolean receiving;
  private boolean headersDelivered;

  StreamClientCall(
      Settings settings,
      MethodDescriptor<Q, R> method,
      CallOptions options,
      MessageCodec<Q> requestCodec,
      MessageCodec<R> responseCodec) {
    super(settings, method, options, requestCodec, responseCodec);
  }

  @Override
  public void start(Listener<R> responseListener, Metadata headers) {
    if (!begin(responseListener, headers)) {
      return;
    }
    RequestMeta m = requestMeta(headers);
    tracers.started(headers);
    CompletableFuture<ClientStream> f;
    try {
      f = settings.config().callStream(m);
    } catch (RuntimeException e) {
      f = CompletableFuture.failedFuture(e);
    }
    synchronized (lock) {
      meta = m;
      opening = f;
    }
    f.whenComplete(this::opened);
  }

  private void opened(ClientStream s, Throwable error) {
    if (error != null) {
      fail(error);
      return;
    }
    synchronized (lock) {
      stream = s;
    }
    if (isClosed()) {
      s.cancel();
      return;
    }
    s.headers().whenComplete((h, e) -> serial.execute(() -> deliverHeaders(s)));
    callback(l -> l.onReady());
    outbox.drain(false);
    serial.execute(this::pump);
  }

  // ---- receiving
  // ---------------------------------------------------------------------------------

  @Override
  public void request(int numMessages) {
    serial.execute(
        () -> {
          demand += numMessages;
          pump();
        });
  }

  /** Serial only. */
  private void pump() {
    ClientStream s;
    synchronized (lock) {
      s = stream;
    }
    if (s == null || demand <= 0 || receiving || isClosed()) {
      return;
    }
    receiving = true;
    CompletableFuture<StreamMessage> next;
    try {
      next = s.receive();
    } catch (RuntimeException e) {
      next = CompletableFuture.failedFuture(e);
    }
    next.whenComplete((m, e) -> serial.execute(() -> received(s, m, e)));
  }

  /** Delivers the server's headers once, when they have arrived (nothing if the stream failed). Serial only. */
  private void deliverHeaders(ClientStream s) {
    if (headersDelivered) {
      return;
    }
    headersDelivered = true;
    Headers h = s.headers().isCompletedExceptionally() ? null : s.headers().getNow(null);
    if (h != null) {
      Metadata md = HeaderMetadata.toMetadata(h);
      tracers.headers(md);
      withListener(l -> l.onHeaders(md));
    }
  }

  /** Serial only. */
  private void received(ClientStream s, StreamMessage message, Throwable error) {
    if (!headersDelivered && !s.headers().isDone() && error == null) {
      // Headers first: they arrive before any message, but their future may complete a little
      // later.
      s.headers().whenComplete((h, e) -> serial.execute(() -> received(s, message, null)));
      return;
    }
    deliverHeaders(s);
    receiving = false;
    if (error != null) {
      fail(error);
      return;
    }
    if (message == null) {
      closeWith(Status.OK, trailers(s));
      return;
    }
    R decoded;
    try {
      if (isClosed()) {
        return;
      }
      tracers.received(message.body().length());
      decoded = responseCodec.decode(message.body(), encoding);
    } catch (IOException | RuntimeException e) {
      RequestMeta m;
      synchronized (lock) {
        m = meta;
      }
      fail(EncodingErrors.responseBodyDecodeError(m, encoding, e));
      s.cancel();
      return;
    } finally {
      message.release();
    }
    demand--;
    withListener(l -> l.onMessage(decoded));
    pump();
  }

  // ---- sending
  // -----------------------------------------------------------------------------------

  @Override
  public void sendMessage(Q message) {
    synchronized (lock) {
      if (halfCloseRequested) {
        throw new IllegalStateException("call was half-closed");
      }
    }
    if (isClosed()) {
      return; // grpc drops messages sent after the call closed
    }
    Body body;
    try {
      body = requestCodec.encode(message, encoding);
    } catch (IOException | RuntimeException e) {
      RequestMeta m;
      synchronized (lock) {
        m = meta;
      }
      fail(EncodingErrors.requestBodyEncodeError(m, encoding, e));
      cancelStream();
      return;
    }
    tracers.sent(body.length());
    synchronized (lock) {
      outbox.addLocked(body);
    }
    outbox.drain(false);
  }

  @Override
  public void halfClose() {
    synchronized (lock) {
      if (halfCloseRequested) {
        throw new IllegalStateException("call was already half-closed");
      }
      halfCloseRequested = true;
    }
    outbox.drain(false);
  }

  @Override
  public boolean isReady() {
    synchronized (lock) {
      return stream != null && outbox.idleLocked() && !halfCloseRequested && !isClosed();
    }
  }

  // ---- ending
  // ------------------------------------------------------------------------------------

  private void fail(Throwable error) {
    ClientErrors.Failure f = ClientErrors.toGrpc(error, encoding, responseCodec.types());
    ClientStream s;
    synchronized (lock) {
      s = stream;
    }
    Metadata trailers = f.trailers();
    if (s != null) {
      trailers.merge(trailers(s));
    }
    closeWith(f.status(), trailers);
    outbox.dropAll();
  }

  /** The server's trailers, as the stream reported them on ending (empty if it has not). */
  private static Metadata trailers(ClientStream s) {
    Headers h = s.trailers().getNow(null);
    return h == null ? new Metadata() : HeaderMetadata.toMetadata(h);
  }

  @Override
  public void cancel(String message, Throwable cause) {
    if (message == null && cause == null) {
      message = "cancelled with no message or cause";
    }
    if (closeWith(Status.CANCELLED.withDescription(message).withCause(cause), new Metadata())) {
      cancelStream();
    }
  }

  @Override
  void cancelFromContext(Status status) {
    if (closeWith(status, new Metadata())) {
      cancelStream();
    }
  }

  private void cancelStream() {
    ClientStream s;
    CompletableFuture<ClientStream> f;
    synchronized (lock) {
      s = stream;
      f = opening;
    }
    outbox.dropAll();
    if (s != null) {
      s.cancel();
    } else if (f != null) {
      f.cancel(false); // a stream that opens later is cancelled in opened()
    }
  }
}
