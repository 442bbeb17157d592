package io.yarpc.transport;

import java.util.concurrent.CompletableFuture;

/**
 * The one shape of every call step in YARPC: take an input, eventually produce an output. Inbound handlers
 * ({@code Handler<Request, Response>} unary, {@code Handler<Request, Void>} oneway,
 * {@code Handler<ServerStream, Void>} streaming) and the "next" step of outbound middleware share it, so
 * one {@link io.yarpc.middleware.Middleware} type and one chain serve all of them.
 *
 * <p>Errors complete the future exceptionally, preferably with a {@link io.yarpc.errors.YarpcException}.
 * A caller that cancels the future signals that the result is no longer wanted.
 *
 * <p>An inbound handler must always complete its future, also after its call was cancelled or timed out
 * ({@link io.yarpc.Call#onCancel}): the request body is released when the handler's own future
 * completes, so a handler that never completes holds its request's memory forever.
 *
 * @param <I> the input: a request, or a server stream
 * @param <O> the output: a response, {@code Void}, or a client stream
 */
@FunctionalInterface
public interface Handler<I, O> {
  /** Handles {@code input}; must not block the calling thread for long. */
  CompletableFuture<O> handle(I input);
}
