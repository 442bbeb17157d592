package io.yarpc.transport;

import java.util.concurrent.CompletableFuture;

/**
 * Opens streams. The request deadline bounds the whole stream. The future completes with the client's end
 * once the stream is established.
 */
public interface StreamOutbound extends TransportComponent {
  /** Opens a stream for {@code meta}. */
  CompletableFuture<ClientStream> callStream(RequestMeta meta);
}
