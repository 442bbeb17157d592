package io.yarpc.transport.http.internal;

import io.netty.handler.codec.http2.DefaultHttp2Connection;
import io.netty.handler.codec.http2.DefaultHttp2RemoteFlowController;
import io.netty.handler.codec.http2.Http2CodecUtil;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.WeightedFairQueueByteDistributor;

/**
 * How both ends of an h2c connection differ from Netty's HTTP/2 defaults, the same ways grpc-java's do:
 *
 * <ul>
 *   <li><b>Flow-control windows.</b> HTTP/2's defaults (64 KiB per stream and per connection) make a
 *       1 MiB body wait for about 30 window updates, and 64 concurrent streams share a single 64 KiB
 *       connection window.
 *   <li><b>Allocation quantum.</b> Netty's default stream scheduler hands the bytes the socket can take
 *       (64 KiB up to the channel's write-buffer high-water mark) to the streams with data in 1 KiB
 *       shares, so with many busy streams every DATA frame carries about 1 KiB: measured with 64 streams
 *       of 1 MiB, the per-frame objects (frames, promises, window updates) came to about 0.5 MB of heap per
 *       call on each side. Shares of {@value #ALLOCATION_QUANTUM} bytes fill whole frames.
 * </ul>
 */
final class H2Tuning {
  /** The initial window of every stream, announced in SETTINGS. */
  static final int STREAM_WINDOW = 1 << 20;

  /** The window of the whole connection. */
  static final int CONNECTION_WINDOW = 16 << 20;

  /** The bytes the stream scheduler hands a stream at a time: one default-sized DATA frame. */
  static final int ALLOCATION_QUANTUM = 16 * 1024;

  private H2Tuning() {}

  /** A client's connection state, with the scheduler described above. */
  static DefaultHttp2Connection clientConnection() {
    DefaultHttp2Connection connection = new DefaultHttp2Connection(false);
    WeightedFairQueueByteDistributor distributor = new WeightedFairQueueByteDistributor(connection);
    distributor.allocationQuantum(ALLOCATION_QUANTUM);
    connection
        .remote()
        .flowController(new DefaultHttp2RemoteFlowController(connection, distributor));
    return connection;
  }

  /**
   * Gives a server's {@code connection} the scheduler described above and an outbound flow controller that
   * counts what it writes per stream: the {@link WriteProgress} returned.
   */
  static WriteProgress tuneServer(DefaultHttp2Connection connection) {
    WeightedFairQueueByteDistributor distributor = new WeightedFairQueueByteDistributor(connection);
    distributor.allocationQuantum(ALLOCATION_QUANTUM);
    WriteProgress progress =
        new WriteProgress(
            connection, new DefaultHttp2RemoteFlowController(connection, distributor));
    connection.remote().flowController(progress);
    return progress;
  }

  /**
   * The initial window of each stream a server announces: {@link #STREAM_WINDOW}, or less when the bytes
   * a connection may hold ({@code perConnection}) shared by its streams ({@code maxStreams}) come to less,
   * but never less than HTTP/2's default (a client may send that much before it sees our SETTINGS).
   * Credit a server withholds cannot take back the windows it already gave, so what the open streams of a
   * connection may send without new credit stays near what the connection may hold.
   */
  static int serverStreamWindow(long perConnection, int maxStreams) {
    long share = perConnection / Math.max(1, maxStreams);
    return (int) Math.max(Http2CodecUtil.DEFAULT_WINDOW_SIZE, Math.min(STREAM_WINDOW, share));
  }

  /**
   * The connection window a server gives: {@link #CONNECTION_WINDOW}, or more when {@code maxStreams}
   * streams of {@code streamWindow} could otherwise use it all up. The connection window bounds nothing a
   * server withholding credit stream by stream needs bounded (the stream windows do), but it must not run
   * out: a stream whose credit is withheld keeps the connection window it used, and the stream that is
   * still given credit (the oldest, see {@code ConnectionBudget}) needs some left, also while Netty waits
   * for half the window to be consumed before it announces connection credit.
   */
  static int serverConnectionWindow(int streamWindow, int maxStreams) {
    long needed = 2L * maxStreams * streamWindow + 2L * streamWindow;
    return (int) Math.min(Integer.MAX_VALUE, Math.max(CONNECTION_WINDOW, needed));
  }

  /** SETTINGS to announce: Netty's defaults with the stream window above. */
  static Http2Settings initialSettings() {
    return Http2Settings.defaultSettings().initialWindowSize(STREAM_WINDOW);
  }
}
