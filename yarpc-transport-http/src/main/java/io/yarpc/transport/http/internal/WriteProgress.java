package io.yarpc.transport.http.internal;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http2.Http2Connection;
import io.netty.handler.codec.http2.Http2Exception;
import io.netty.handler.codec.http2.Http2RemoteFlowController;
import io.netty.handler.codec.http2.Http2Stream;

/**
 * An HTTP/2 connection's outbound flow controller that counts, per stream, the bytes it has written: a
 * response stuck behind a zero flow-control window (or a socket the peer does not read) shows no
 * progress, which {@link WriteWatch} turns into a reset once {@code InboundLimits.writeTimeout} has passed.
 * Everything else is Netty's {@code DefaultHttp2RemoteFlowController}, which it wraps.
 *
 * <p>Event loop only, like the codec that calls it.
 */
final class WriteProgress implements Http2RemoteFlowController {
  /** Bytes written for one stream; read by that stream's handler. */
  static final class Counter {
    private long written;

    long written() {
      return written;
    }
  }

  private final Http2RemoteFlowController delegate;
  private final Http2Connection.PropertyKey key;

  WriteProgress(Http2Connection connection, Http2RemoteFlowController delegate) {
    this.delegate = delegate;
    this.key = connection.newKey();
  }

  /** The counter of {@code stream} (created on first use). */
  Counter counter(Http2Stream stream) {
    Counter c = stream.getProperty(key);
    if (c == null) {
      c = new Counter();
      stream.setProperty(key, c);
    }
    return c;
  }

  @Override
  public void addFlowControlled(Http2Stream stream, FlowControlled payload) {
    delegate.addFlowControlled(stream, new Counted(payload, counter(stream)));
  }

  @Override
  public ChannelHandlerContext channelHandlerContext() {
    return delegate.channelHandlerContext();
  }

  @Override
  public boolean hasFlowControlled(Http2Stream stream) {
    return delegate.hasFlowControlled(stream);
  }

  @Override
  public void writePendingBytes() throws Http2Exception {
    delegate.writePendingBytes();
  }

  @Override
  public void listener(Listener listener) {
    delegate.listener(listener);
  }

  @Override
  public boolean isWritable(Http2Stream stream) {
    return delegate.isWritable(stream);
  }

  @Override
  public void channelWritabilityChanged() throws Http2Exception {
    delegate.channelWritabilityChanged();
  }

  @Override
  public void updateDependencyTree(
      int childStreamId, int parentStreamId, short weight, boolean exclusive) {
    delegate.updateDependencyTree(childStreamId, parentStreamId, weight, exclusive);
  }

  @Override
  public void channelHandlerContext(ChannelHandlerContext ctx) throws Http2Exception {
    delegate.channelHandlerContext(ctx);
  }

  @Override
  public void initialWindowSize(int newWindowSize) throws Http2Exception {
    delegate.initialWindowSize(newWindowSize);
  }

  @Override
  public int initialWindowSize() {
    return delegate.initialWindowSize();
  }

  @Override
  public int windowSize(Http2Stream stream) {
    return delegate.windowSize(stream);
  }

  @Override
  public void incrementWindowSize(Http2Stream stream, int delta) throws Http2Exception {
    delegate.incrementWindowSize(stream, delta);
  }

  /** A queued frame whose writes are counted. */
  private static final class Counted implements FlowControlled {
    private final FlowControlled payload;
    private final Counter counter;

    Counted(FlowControlled payload, Counter counter) {
      this.payload = payload;
      this.counter = counter;
    }

    @Override
    public int size() {
      return payload.size();
    }

    @Override
    public void error(ChannelHandlerContext ctx, Throwable cause) {
      payload.error(ctx, cause);
    }

    @Override
    public void writeComplete() {
      payload.writeComplete();
    }

    @Override
    public void write(ChannelHandlerContext ctx, int allowedBytes) {
      int before = payload.size();
      payload.write(ctx, allowedBytes);
      int written = before - payload.size();
      if (written > 0 || before == 0) {
        counter.written += Math.max(1, written); // an empty frame written is progress too
      }
    }

    @Override
    public boolean merge(ChannelHandlerContext ctx, FlowControlled next) {
      // the frame already queued takes the next one's bytes (Netty merges frames of the same kind)
      return payload.merge(ctx, next instanceof Counted c ? c.payload : next);
    }
  }
}
