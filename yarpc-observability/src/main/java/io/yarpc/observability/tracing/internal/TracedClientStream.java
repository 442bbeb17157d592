package io.yarpc.observability.tracing.internal;

import io.yarpc.transport.ClientStream;
import io.yarpc.transport.ForwardingClientStream;
import io.yarpc.transport.StreamMessage;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;

/**
 * A client stream whose span ends with the stream: when a receive reports the end of the stream (success)
 * or fails (the stream's error), or when the holder cancels it. Everything else is the wrapped stream's.
 */
final class TracedClientStream extends ForwardingClientStream {
  private final TracedCall traced;

  TracedClientStream(ClientStream stream, TracedCall traced) {
    super(stream);
    this.traced = traced;
  }

  @Override
  public CompletableFuture<StreamMessage> receive() {
    CompletableFuture<StreamMessage> f = delegate().receive();
    f.whenComplete(
        (message, error) -> {
          if (error != null || message == null) {
            traced.end(null, error, null);
          }
        });
    return f;
  }

  @Override
  public void cancel() {
    traced.end(null, new CancellationException("stream cancelled by its holder"), null);
    delegate().cancel();
  }
}
