package io.yarpc.transport.http.internal;

import io.netty.handler.codec.http.FullHttpRequest;
import io.yarpc.errors.YarpcException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One HTTP request on its way to a peer, and the future of its response.
 *
 * <p>Ownership: the call owns the request until its outcome is settled (response delivered, failure, or
 * cancellation), then releases it, once. Each attempt writes a {@linkplain #attempt() retained duplicate}
 * (the bytes are shared, not copied), so a request the server provably did not process — a write that
 * failed on a reused HTTP/1.1 connection, an HTTP/2 stream refused or cut off by GOAWAY before any
 * response — can be sent again; when it cannot be (no attempts left), its error is marked {@linkplain
 * YarpcException#unprocessed() unprocessed}, as is the error of a call that never left (no connection,
 * no stream). A delivered response's content belongs to whoever takes the result; if
 * nobody can (the call was cancelled first), it is released here.
 */
public final class ClientCall {
  /** Attempts a call may make in all (the first one included). */
  static final int MAX_ATTEMPTS = 4;

  private final FullHttpRequest request;
  private final int maxResponseBodySize;
  private final CompletableFuture<ClientResponse> result = new CompletableFuture<>();
  private final AtomicBoolean settled = new AtomicBoolean();
  private volatile Runnable abort; // closes the connection (HTTP/1.1) or resets the stream (HTTP/2)
  private volatile boolean cancelled;
  private boolean requestReleased; // guarded by this
  private int attempts; // guarded by this
  private boolean refusedBefore; // guarded by this

  ClientCall(FullHttpRequest request, int maxResponseBodySize) {
    this.request = request;
    this.maxResponseBodySize = maxResponseBodySize;
  }

  /** Completes with the response, or with a {@link io.yarpc.errors.YarpcException}. */
  public CompletableFuture<ClientResponse> result() {
    return result;
  }

  int maxResponseBodySize() {
    return maxResponseBodySize;
  }

  /**
   * The request to write for a new attempt (a retained duplicate the writer owns), or null when the call
   * is settled or has used up its attempts.
   */
  synchronized FullHttpRequest attempt() {
    if (requestReleased || settled.get() || attempts >= MAX_ATTEMPTS) {
      return null;
    }
    attempts++;
    return request.retainedDuplicate();
  }

  /** True the first time only: whether a refused stream may be sent again. */
  synchronized boolean firstRefusal() {
    return !refusedBefore && (refusedBefore = true);
  }

  /** Whether another attempt is allowed. */
  synchronized boolean mayRetry() {
    return !requestReleased && !settled.get() && attempts < MAX_ATTEMPTS;
  }

  private synchronized void releaseRequest() {
    if (!requestReleased) {
      requestReleased = true;
      request.release();
    }
  }

  /**
   * The current attempt runs where {@code abort} stops it (any thread): it closes the HTTP/1.1 connection
   * or resets the HTTP/2 stream. Run at once when the call was cancelled meanwhile.
   */
  void attach(Runnable abort) {
    this.abort = abort;
    if (cancelled) {
      abort.run();
    }
  }

  boolean isSettled() {
    return settled.get();
  }

  /**
   * Abandons the call if it is still in flight (a call whose outcome is settled is left alone, and so is
   * the connection it has gone back to): the request is released, the result cancelled, and the
   * connection (HTTP/1.1) or stream (HTTP/2, reset) carrying it is closed, so whatever arrives later is
   * released by the handler.
   */
  public void cancel() {
    if (!settled.compareAndSet(false, true)) {
      return;
    }
    cancelled = true;
    releaseRequest();
    Runnable a = abort;
    if (a != null) {
      a.run();
    }
    result.cancel(false);
  }

  /**
   * Claims the call's outcome for a response that has fully arrived; false when the call was cancelled
   * or failed first (then the response is not delivered and its connection must not be reused).
   */
  boolean settle() {
    if (settled.compareAndSet(false, true)) {
      releaseRequest();
      return true;
    }
    return false;
  }

  /** Delivers the response of a {@linkplain #settle() settled} call. */
  void deliver(ClientResponse response) {
    if (!result.complete(response)) {
      response.content().release();
    }
  }

  /**
   * Fails the call with {@code error} marked {@linkplain YarpcException#unprocessed() unprocessed}: the
   * server provably did not process the request (it never left, or the server refused it).
   */
  void failUnprocessed(YarpcException error) {
    fail(error.withUnprocessed());
  }

  /** Fails the call unless its outcome is settled already. */
  void fail(Throwable error) {
    if (settled.compareAndSet(false, true)) {
      releaseRequest();
      result.completeExceptionally(error);
    }
  }
}
