package io.yarpc.observability.tracing.internal;

import io.yarpc.transport.ClientStream;
import io.yarpc.transport.Headers;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.StreamMessage;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;

/**
 * A client stream whose span ends with the stream: when a receive reports the end of the stream (success)
 * or fails (the stream's error), or when the holder cancels it. Everything else is the wrapped stream's.
 */
final class TracedClientStream implements ClientStream {
  private final ClientStream stream;
  private final TracedCall traced;

  TracedClientStream(ClientStream stream, TracedCall traced) {
    this.stream = stream;
    this.traced = traced;
  }

  @Override
  public RequestMeta meta() {
    return stream.meta();
  }

  @Override
  public CompletableFuture<Void> send(StreamMessage message) {
    return stream.send(message);
  }

  @Override
  public CompletableFuture<StreamMessage> receive() {
    CompletableFuture<StreamMessage> f = stream.receive();
    f.whenComplete(
        (message, error) -> {
          if (error != null || message == null) {
            traced.end(null, error, null);
          }
        });
    return f;
  }

  @Override
  public CompletableFuture<Headers> headers() {
    return stream.headers();
  }

  @Override
  public CompletableFuture<Headers> trailers() {
    return stream.trailers();
  }

  @Override
  public void halfClose() {
    stream.halfClose();
  }

  @Override
  public void cancel() {
    traced.end(null, new CancellationException("stream cancelled by its holder"), null);
    stream.cancel();
  }
}
