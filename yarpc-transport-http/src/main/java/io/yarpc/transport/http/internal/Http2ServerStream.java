package io.yarpc.transport.http.internal;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2Exception;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2Stream;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One request stream of an h2c connection, kept in the stream's property by {@link Http2ServerHandler}: it
 * receives the request ({@link RequestReceiver}: limits, receive timer, the connection's {@link
 * ConnectionBudget}), serves it ({@link CallServer}) and writes its answer through the connection handler.
 * A stream carries one request, so there is nothing to order and no keep-alive to decide.
 *
 * <p><b>Credit.</b> Every DATA frame's bytes are owed back to the client as window. They are given back at
 * once (as "processed" when the frame is read) while the connection's budget lets this stream receive;
 * while it does not (the stream is {@linkplain #pause() paused}) they are withheld, so the client can send
 * no more than the windows it has, until the budget lets it receive again or the bytes the stream holds are
 * handed on or dropped ({@link #released()}). A closed stream's bytes go back to the connection window
 * (Netty's local flow controller does that).
 *
 * <p><b>Header fields.</b> A HEADERS block (request headers or trailers) with more regular fields than
 * {@code InboundLimits.maxHeaderCount} is rejected with 431. Netty's HPACK decoder bounds what it decodes by
 * {@code SETTINGS_MAX_HEADER_LIST_SIZE}, which charges 32 bytes per field.
 *
 * <p><b>Ending.</b> The answer ends the stream; after a rejection, a failed write or an answer that could not
 * be built the stream is reset ({@code CANCEL}) if the client is still sending; an unprocessed refusal of the
 * dispatcher resets it with {@code REFUSED_STREAM}. When the client resets the stream (or the connection
 * closes) the running call is cancelled and whatever the stream holds is released.
 *
 * <p><b>Threads.</b> Event loop only; answers built on a handler's thread hop onto it ({@link
 * CallServer#completed}). <b>Ownership.</b> The exchange is counted in ({@link
 * InboundState#exchangeStarted()}) when received and out exactly once when finished; each answer handed to
 * {@link #write} is written (the encoder releases it) or released here.
 */
final class Http2ServerStream
    implements ConnectionBudget.Receiver, CallServer.Answers, Consumer<Exchange> {
  private static final Logger log = LoggerFactory.getLogger(Http2ServerStream.class);

  private final Http2ServerHandler conn;
  private final Http2Stream stream;
  private final RequestReceiver receiver;
  private Exchange current;
  private ChannelFuture written; // the answer's write, until the flush after it has looked at it
  private int owed; // flow-control credit withheld
  private boolean withheld;
  private boolean closed;

  Http2ServerStream(Http2ServerHandler conn, Http2Stream stream) {
    this.conn = conn;
    this.stream = stream;
    this.receiver = new RequestReceiver(conn.settings(), true, this);
    this.receiver.attach(conn.ctx(), conn.budget(), this);
  }

  /** A HEADERS block: the request's head, or the trailers that end it. */
  void headers(Http2Headers headers, boolean end) throws Http2Exception {
    int max = conn.settings().limits().maxHeaderCount();
    if (headers.size() > max && regularFields(headers) > max) {
      receiver.tooManyHeaders(max);
      return;
    }
    if (receiver.isStopped()) {
      return;
    }
    if (receiver.isReceiving()) {
      if (end) {
        receiver.data(
            io.netty.buffer.Unpooled.EMPTY_BUFFER, true); // trailers: nothing of them is used
      }
      return;
    }
    if (current != null) {
      throw Http2Exception.streamError(
          stream.id(), Http2Error.PROTOCOL_ERROR, "a second request on one stream");
    }
    CharSequence method = headers.method();
    CharSequence path = headers.path();
    if (method == null || path == null) {
      throw Http2Exception.streamError(
          stream.id(), Http2Error.PROTOCOL_ERROR, "request without :method or :path");
    }
    HttpMethod m;
    if (HttpMethod.POST.asciiName().contentEquals(method)) {
      m = HttpMethod.POST; // every call: no string made of it
    } else {
      try {
        m = HttpMethod.valueOf(method.toString());
      } catch (IllegalArgumentException e) {
        throw Http2Exception.streamError(
            stream.id(), Http2Error.PROTOCOL_ERROR, "malformed :method %s", method);
      }
    }
    receiver.head(
        new DefaultHttpRequest(
            HttpVersion.HTTP_1_1, m, path.toString(), new Http2HeadersView(headers)),
        end);
    if (!end) {
      conn.afterRead(this);
    }
  }

  /** The end of the read that brought the request's head: its receive timer starts if it is incomplete. */
  void readComplete() {
    if (receiver.isReceiving() && !receiver.isStopped()) {
      receiver.requestBytesArrived();
    }
  }

  /** A DATA frame: returns the bytes given back to the client at once (the rest are owed). */
  int data(ByteBuf data, int padding, boolean end) {
    int n = data.readableBytes() + padding;
    receiver.data(data, end);
    if (withheld) {
      owed += n;
      return 0;
    }
    return n;
  }

  /** A request was received (or rejected while being received): counted in and served now. */
  @Override
  public void accept(Exchange ex) {
    conn.state().exchangeStarted();
    current = ex;
    conn.calls().serve(ex, this);
  }

  @Override
  public void write(Exchange ex, FullHttpResponse res) {
    if (closed || !stream.state().localSideOpen() || ex.isFinished()) {
      res.release();
      finish(ex);
      return;
    }
    boolean rejected = ex.rejection() != null;
    if (rejected) {
      receiver.stop();
    }
    // no content in an answer to HEAD (HTTP/1.1's codec drops it itself)
    ChannelFuture f = conn.writeAnswer(stream, res, !ex.context().headRequest());
    f.addListener(
        (ChannelFutureListener)
            done -> {
              if (rejected || !done.isSuccess()) {
                receiver.stop();
                reset(Http2Error.CANCEL); // the client may still be sending
              }
              finish(ex);
            });
    if (!f.isDone()) {
      written = f;
      conn.watchAfterFlush(this);
    }
  }

  /** The flush after the answer's write went out: watch the write if it is still under way. */
  void flushed() {
    ChannelFuture f = written;
    written = null;
    if (f != null && !f.isDone()) {
      WriteWatch.watch(
          conn.ctx(),
          f,
          () -> conn.writtenBytes(stream),
          conn.settings().writeTimeoutNanos(),
          this::writeTimedOut);
    }
  }

  @Override
  public void finish(Exchange ex) {
    if (!ex.finish()) {
      return;
    }
    conn.state().exchangeFinished();
    if (current == ex) {
      current = null;
    }
  }

  @Override
  public void abort(Exchange ex) {
    receiver.stop();
    reset(Http2Error.CANCEL);
    finish(ex);
  }

  @Override
  public void refuse(Exchange ex) {
    receiver.stop();
    if (!ex.isFinished()) {
      reset(Http2Error.REFUSED_STREAM);
    }
    finish(ex);
  }

  /** Nothing of the answer was written for the write timeout: the client does not read. */
  private void writeTimedOut() {
    log.debug(
        "HTTP inbound {}: the client read nothing of an answer for {} ms; resetting stream {}",
        conn.ctx().channel(),
        TimeUnit.NANOSECONDS.toMillis(conn.settings().writeTimeoutNanos()),
        stream.id());
    receiver.stop();
    reset(Http2Error.CANCEL); // releases the frames queued for it
  }

  private void reset(Http2Error code) {
    if (!closed && stream.state() != Http2Stream.State.CLOSED) {
      conn.reset(stream, code);
    }
  }

  /** The stream closed (answered, reset by either side, or the connection closed). */
  void closed() {
    closed = true;
    owed = 0; // Netty's flow controller gives a closed stream's bytes back to the connection window
    receiver.close();
    conn.budget().forget(this);
    Exchange ex = current;
    if (ex != null) {
      if (ex.future() != null && !ex.future().isDone()) {
        // the handler's call is cancelled; a late response is released by the core
        ex.future().cancel(false);
      } else if (ex.future() == null) {
        finish(ex);
      }
    }
  }

  @Override
  public void pause() {
    withheld = true;
  }

  @Override
  public void resume() {
    withheld = false;
    credit();
  }

  @Override
  public void released() {
    credit();
  }

  @Override
  public boolean isPaused() {
    return withheld;
  }

  private void credit() {
    if (owed <= 0 || closed) {
      owed = 0;
      return;
    }
    int n = owed;
    owed = 0;
    conn.consumed(stream, n);
  }

  private static int regularFields(Http2Headers headers) {
    int n = 0;
    for (Map.Entry<CharSequence, CharSequence> e : headers) {
      if (!Http2Headers.PseudoHeaderName.hasPseudoHeaderFormat(e.getKey())) {
        n++;
      }
    }
    return n;
  }
}
