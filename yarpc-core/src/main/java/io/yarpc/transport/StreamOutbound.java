package io.yarpc.transport;

import java.util.concurrent.CompletableFuture;

/**
 * Opens streams. The contract:
 *
 * <ul>
 *   <li>An implementation MAY assume the metadata is complete and valid (the call path checked it); a
 *       deadline, when present, bounds the whole stream and the implementation MUST end the stream with
 *       {@code deadline-exceeded} when it passes (streams have no timer in the call path).
 *   <li>The future completes with the client's end once the stream is established, or fails with a {@link
 *       io.yarpc.errors.YarpcException}. Cancelling it before then MUST abandon the stream; a stream
 *       established after the future completed MUST be cancelled by the implementation.
 *   <li>The {@link ClientStream} follows {@link MessageStream}'s flow control and ownership rules.
 *   <li>{@code callStream} MUST be thread-safe and non-blocking; called while not running it MUST fail with
 *       {@code unavailable}.
 * </ul>
 */
public interface StreamOutbound extends TransportComponent {
  /** Opens a stream for {@code meta}. */
  CompletableFuture<ClientStream> callStream(RequestMeta meta);
}
