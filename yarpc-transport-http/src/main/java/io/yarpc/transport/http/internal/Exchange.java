package io.yarpc.transport.http.internal;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpRequest;
import io.yarpc.errors.YarpcException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One request on an HTTP/1.1 connection or an HTTP/2 stream, from the moment it is fully received (or
 * rejected while being received) until its answer is written or it is abandoned: what its answer needs,
 * its head and body until the call takes them, and whether it is over.
 *
 * <p><b>Threads.</b> Created, served and finished on the channel's event loop. The handler's thread only
 * reads {@link #context()} (final) while it builds the answer; {@link #finish()} is atomic because an
 * exchange may also be finished off the event loop once that loop has shut down.
 *
 * <p><b>Ownership.</b> The exchange owns the received body buffer until {@link #takeBody()} hands it to the
 * call; {@link #finish()} and {@link #drop()} release whatever it still holds, exactly once. A rejection
 * holds no buffer: its answer is built when its turn comes. The body's bytes stay counted in the
 * connection's {@link ConnectionBudget} until the body is handed on or released (once, from whichever
 * thread does it).
 */
final class Exchange {
  private final InboundResponses.Context context;
  private final boolean keepAlive;
  private final YarpcException rejection;
  private final int rejectionStatus;
  private final AtomicBoolean finished = new AtomicBoolean();
  private HttpRequest head;
  private ByteBuf body;
  private CompletableFuture<?> future;
  private CallServer.Answers answers;
  private ConnectionBudget budget; // where the body's bytes are counted until handed on; null after
  private ConnectionBudget.Receiver receiver;
  private long held;

  private Exchange(
      InboundResponses.Context context,
      boolean keepAlive,
      HttpRequest head,
      ByteBuf body,
      YarpcException rejection,
      int rejectionStatus) {
    this.context = context;
    this.keepAlive = keepAlive;
    this.head = head;
    this.body = body;
    this.rejection = rejection;
    this.rejectionStatus = rejectionStatus;
  }

  /** A fully received request; the exchange takes over {@code body}. */
  static Exchange received(HttpRequest head, ByteBuf body, boolean http2) {
    return received(head, body, http2, null, null, 0);
  }

  /**
   * A fully received request; the exchange takes over {@code body}, whose {@code held} bytes {@code
   * receiver} counted in {@code budget} (given back when the body is handed on or released).
   */
  static Exchange received(
      HttpRequest head,
      ByteBuf body,
      boolean http2,
      ConnectionBudget budget,
      ConnectionBudget.Receiver receiver,
      long held) {
    Exchange ex =
        new Exchange(
            RequestDecoder.responseContext(head, http2),
            RequestDecoder.keepAlive(head),
            head,
            body,
            null,
            0);
    ex.budget = budget;
    ex.receiver = receiver;
    ex.held = held;
    return ex;
  }

  /**
   * The request being received (its {@code head}, or null when none was decoded), rejected with
   * {@code error} and HTTP {@code status}; the channel closes after its answer.
   */
  static Exchange rejected(HttpRequest head, YarpcException error, int status, boolean http2) {
    return new Exchange(
        RequestDecoder.responseContext(head, http2),
        RequestDecoder.keepAlive(head),
        null,
        null,
        error,
        status);
  }

  /** What the answer needs from the request. */
  InboundResponses.Context context() {
    return context;
  }

  /** Whether the client asked to keep the connection open (HTTP/1.1). */
  boolean keepAlive() {
    return keepAlive;
  }

  /** The error of a request rejected while being received, or null for a received request. */
  YarpcException rejection() {
    return rejection;
  }

  /** The HTTP status of {@link #rejection()}. */
  int rejectionStatus() {
    return rejectionStatus;
  }

  /** The request head, once; null after. */
  HttpRequest takeHead() {
    HttpRequest h = head;
    head = null;
    return h;
  }

  /** The body buffer, which the caller now owns; null after (or for a rejection). */
  ByteBuf takeBody() {
    ByteBuf b = body;
    body = null;
    handedOn();
    return b;
  }

  /** Releases the body buffer if the exchange still holds it. */
  void releaseBody() {
    if (body != null) {
      body.release();
      body = null;
    }
    handedOn();
  }

  /** The body's bytes no longer wait here: they leave the connection's budget (once). */
  private void handedOn() {
    ConnectionBudget b = budget;
    if (b != null) {
      budget = null;
      b.releaseComplete(receiver, held);
    }
  }

  /** Where the answer goes (set when the exchange is served). */
  CallServer.Answers answers() {
    return answers;
  }

  void answers(CallServer.Answers answers) {
    this.answers = answers;
  }

  /** The unary handler's result, once the call runs; null before and for other calls. */
  CompletableFuture<?> future() {
    return future;
  }

  void future(CompletableFuture<?> future) {
    this.future = future;
  }

  boolean isFinished() {
    return finished.get();
  }

  /** Marks the exchange over and releases its body: true the first time, false after. */
  boolean finish() {
    if (!finished.compareAndSet(false, true)) {
      return false;
    }
    releaseBody();
    return true;
  }

  /** Ends an exchange that never started (its connection is closing): marked over, body released. */
  void drop() {
    finished.set(true);
    releaseBody();
  }
}
