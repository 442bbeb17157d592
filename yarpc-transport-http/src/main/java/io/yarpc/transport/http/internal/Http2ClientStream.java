package io.yarpc.transport.http.internal;

import io.netty.handler.codec.http.HttpHeaders;

/**
 * One attempt of a {@link ClientCall} on one stream of an {@link Http2ClientHandler}'s connection: what has
 * been written and received so far. Kept in the stream's {@link
 * io.netty.handler.codec.http2.Http2Connection.PropertyKey} once the stream exists (a stream over the
 * server's {@code SETTINGS_MAX_CONCURRENT_STREAMS} waits in Netty's buffering encoder before it does).
 * Confined to the connection's event loop.
 */
final class Http2ClientStream {
  final ClientCall call;
  final int id;

  /** The call's outcome has been decided here (response, failure, abort): nothing more to do. */
  boolean ended;

  /** Writes of the request (headers, body) that have not completed yet. */
  int writesPending;

  /** The stream closed while the request was being written: the write's outcome ends the attempt. */
  boolean closedWhileWriting;

  /** Any response frame for this attempt. */
  boolean received;

  /** The server did not process the request (REFUSED_STREAM, or above the last stream of a GOAWAY). */
  boolean notProcessed;

  /** That was a REFUSED_STREAM. */
  boolean refused;

  /** The response's status, once its headers arrived. */
  int status;

  /** The response's headers (pseudo-headers left out), once they arrived; null before. */
  HttpHeaders headers;

  /** The error code of the server's RST_STREAM, or -1. */
  long resetCode = -1;

  /** Why a request write failed (the first failure). */
  Throwable writeFailure;

  /** The stream error Netty found on this stream (it resets and closes the stream next). */
  Throwable failure;

  /** The response body received so far (owned here until taken). */
  ReceivedContent content;

  Http2ClientStream(ClientCall call, int id) {
    this.call = call;
    this.id = id;
  }

  /** Releases the body received so far, if any. */
  void releaseContent() {
    if (content != null) {
      content.release();
      content = null;
    }
  }
}
