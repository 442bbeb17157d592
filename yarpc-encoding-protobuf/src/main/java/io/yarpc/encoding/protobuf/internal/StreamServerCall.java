package io.yarpc.encoding.protobuf.internal;

import io.grpc.Metadata;
import io.grpc.Status;
import io.yarpc.Call;
import io.yarpc.encoding.EncodingErrors;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.Headers;
import io.yarpc.transport.MessageStream;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.ServerStream;
import io.yarpc.transport.StreamMessage;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A stream (client, server or bidirectional streaming method) as a grpc {@link io.grpc.ServerCall} over a
 * YARPC {@link ServerStream}, with flow control end to end:
 *
 * <ul>
 *   <li>Receiving: each message the handler asks for with {@link #request} is one {@link
 *       ServerStream#receive()}; never more are pending. A received message is decoded (byte access
 *       first) and released at once, then delivered to {@code onMessage}; end of stream becomes {@code
 *       onHalfClose}.
 *   <li>Sending: one {@link ServerStream#send} at a time ({@link Outbox}); messages sent meanwhile wait
 *       here, {@link #isReady()} is false until they are gone, and {@code onReady} follows when it turns
 *       true again, so a handler that honours {@code isReady} (grpc's {@code ServerCallStreamObserver})
 *       never buffers without bound.
 *   <li>{@link #close}: after the waiting messages are sent, the stream ends — normally for an OK status,
 *       else with the status as a {@link YarpcException} (google.rpc.Status details kept).
 *   <li>A failed receive or send (the client went away, the deadline passed) or the call's cancellation
 *       cancels the call: waiting messages are dropped and {@code onCancel} follows.
 * </ul>
 */
final class StreamServerCall<Q, R> extends ServerCallBase<Q, R> {
  private static final Logger log = LoggerFactory.getLogger(StreamServerCall.class);

  private final ServerStream stream;
  private final CompletableFuture<Void> done = new CompletableFuture<>();

  // Receive side: touched only by tasks on the serial executor.
  private int demand;
  private boolean receiving;
  private boolean inputDone;

  // Send side: guarded by lock.
  private final Object lock = new Object();
  private final Outbox outbox =
      new Outbox(lock) {
        @Override
        MessageStream streamLocked() {
          return finished ? null : stream;
        }

        @Override
        Runnable drainedLocked() {
          if (closeRequested) {
            finished = true;
            return StreamServerCall.this::finish;
          }
          return null;
        }

        @Override
        boolean dropTaken() {
          return false; // a closing call still sends what waits; a finished one has nothing waiting
        }

        @Override
        void sendFailed(Throwable error) {
          onCancelled(YarpcException.from(error));
        }

        @Override
        void ready() {
          callback(l -> l.onReady());
        }
      };
  private boolean closeRequested;
  private boolean finished;
  private YarpcException outcome;
  private volatile boolean cancelled;

  StreamServerCall(
      MethodBinding<Q, R> method,
      RequestMeta meta,
      Call call,
      Executor callbacks,
      ServerStream stream) {
    super(method, meta, call, callbacks);
    this.stream = stream;
  }

  CompletableFuture<Void> done() {
    return done;
  }

  @Override
  void started() {
    callback(l -> l.onReady());
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

  /** Asks the stream for the next message if the handler wants one and none is pending. Serial only. */
  private void pump() {
    if (demand <= 0 || receiving || inputDone || isClosed()) {
      return;
    }
    receiving = true;
    CompletableFuture<StreamMessage> next;
    try {
      next = stream.receive();
    } catch (RuntimeException e) {
      next = CompletableFuture.failedFuture(e);
    }
    next.whenComplete((message, error) -> serial.execute(() -> received(message, error)));
  }

  /** Serial only. */
  private void received(StreamMessage message, Throwable error) {
    receiving = false;
    if (error != null) {
      if (message != null) {
        message.release();
      }
      onCancelled(YarpcException.from(error));
      return;
    }
    if (message == null) {
      inputDone = true;
      withListener(l -> l.onHalfClose());
      return;
    }
    Q decoded;
    try {
      if (isClosed()) {
        return;
      }
      decoded = method.decodeRequest(message.body(), encoding);
    } catch (IOException | RuntimeException e) {
      fail(EncodingErrors.requestBodyDecodeError(meta, encoding, e));
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
  public void sendHeaders(Metadata headers) {
    String compressor = compression();
    if (compressor != null) {
      stream.setCompression(compressor); // before the headers: they announce it
    }
    Headers h = HeaderMetadata.toHeaders(headers);
    if (h.isEmpty()) {
      return; // nothing to say; the transport sends its own headers with the first message
    }
    try {
      stream.sendHeaders(h);
    } catch (RuntimeException e) {
      log.debug("stream headers of {} not sent", meta.procedure(), e);
    }
  }

  @Override
  public void sendMessage(R message) {
    synchronized (lock) {
      if (closeRequested || finished) {
        throw new IllegalStateException("call is closed");
      }
    }
    Body body;
    try {
      body = method.encodeResponse(message, encoding);
    } catch (IOException | RuntimeException e) {
      fail(EncodingErrors.responseBodyEncodeError(meta, encoding, e));
      return;
    }
    synchronized (lock) {
      if (finished) {
        body.release();
        return;
      }
      outbox.addLocked(body);
    }
    outbox.drain(false);
  }

  @Override
  public void close(Status status, Metadata trailers) {
    YarpcException error =
        status.isOk()
            ? null
            : ServerErrors.fromStatus(
                status,
                trailers,
                meta,
                encoding,
                method.types(),
                Headers.empty(),
                Headers.empty(),
                null,
                false);
    synchronized (lock) {
      if (closeRequested || finished) {
        return;
      }
    }
    // Before the close is requested: once it is, another thread's drain may end the stream at once.
    Headers sendTrailers = responseHeaders(trailers);
    if (!sendTrailers.isEmpty()) {
      try {
        stream.setTrailers(sendTrailers);
      } catch (YarpcException unsupported) {
        // a transport without stream trailers: they are dropped, as HTTP has no streams at all
      }
    }
    synchronized (lock) {
      if (closeRequested || finished) {
        return;
      }
      closeRequested = true;
      outcome = error;
    }
    outbox.drain(false);
  }

  private void finish() {
    YarpcException error;
    synchronized (lock) {
      error = outcome;
    }
    if (error == null) {
      done.complete(null);
    } else {
      done.completeExceptionally(error);
    }
    endListener(true);
  }

  /** Ends the stream with {@code error} at once, as the server's own failure (e.g. a message it cannot decode). */
  private void fail(YarpcException error) {
    if (dropEverything()) {
      done.completeExceptionally(error);
      endListener(false);
    }
  }

  @Override
  void onCancelled(YarpcException reason) {
    if (dropEverything()) {
      cancelled = true;
      done.completeExceptionally(reason);
      endListener(false);
    }
  }

  /** Marks the call finished and releases waiting messages; false when it already was. */
  private boolean dropEverything() {
    ArrayDeque<Body> dropped;
    synchronized (lock) {
      if (finished) {
        return false;
      }
      finished = true;
      dropped = outbox.takeAllLocked();
    }
    for (Body b : dropped) {
      b.release();
    }
    return true;
  }

  @Override
  boolean isClosed() {
    synchronized (lock) {
      return closeRequested || finished;
    }
  }

  @Override
  public boolean isCancelled() {
    return cancelled;
  }

  @Override
  public boolean isReady() {
    synchronized (lock) {
      return outbox.idleLocked() && !closeRequested && !finished;
    }
  }
}
