package io.yarpc.transport;

import java.util.concurrent.CompletableFuture;

/**
 * Sends unary calls: one transport's wire work. Callers reach it through core's call path ({@link
 * io.yarpc.ClientConfig}), which runs around every call. The contract, in both directions:
 *
 * <ul>
 *   <li>An implementation MAY assume the request's metadata is complete and valid (caller, service,
 *       procedure, encoding, transport name) and carries a deadline that had not passed when {@code call}
 *       was made: the call path checked it.
 *   <li>It MUST NOT arm a deadline timer of its own or fail calls on the deadline: when the deadline
 *       passes, or the caller cancels, the call path completes the caller's future and cancels the one
 *       returned here. It MAY bound the work that only it knows about (connecting, a peer's queue), and a
 *       library it sends through MAY propagate the deadline with timers of its own (grpc-java does).
 *   <li>When the returned future is cancelled it MUST stop the exchange on the wire (or let it finish and
 *       drop the answer) and release everything it holds for the call.
 *   <li>It owns the request body from the moment {@code call} is entered and MUST release it exactly once
 *       on every path (sent, refused, failed, cancelled).
 *   <li>It MUST complete the future with a {@link Response} whose body the caller then owns, or with a
 *       {@link io.yarpc.errors.YarpcException}, which MAY carry a response (the caller owns its body too);
 *       a response that arrives after the future completed is its to release. It MAY complete the future
 *       on its I/O thread: callers must not block in callbacks.
 *   <li>{@code call} MUST be thread-safe and non-blocking. Called while the outbound is not running it
 *       MUST fail with {@code unavailable} ({@code ... is not running}), releasing the body.
 * </ul>
 */
public interface UnaryOutbound extends TransportComponent {
  /** Sends {@code request}. */
  CompletableFuture<Response> call(Request request);
}
