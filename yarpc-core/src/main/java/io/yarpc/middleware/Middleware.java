package io.yarpc.middleware;

import static java.util.Objects.requireNonNull;

import io.yarpc.transport.Handler;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Wraps a call step: inbound middleware wraps handlers, outbound middleware wraps outbounds, for unary
 * ({@code Middleware<Request, Response>}), oneway ({@code Middleware<Request, Void>}) and stream calls
 * (inbound {@code Middleware<ServerStream, Void>}, outbound {@code Middleware<RequestMeta, ClientStream>})
 * alike. A middleware may inspect or replace the input, call {@code next} zero or more times, and inspect
 * or replace the output:
 *
 * <pre>{@code
 * Middleware<Request, Response> auth = (request, next) ->
 *     request.headers().contains("token")
 *         ? next.handle(request)
 *         : CompletableFuture.failedFuture(YarpcException.of(Code.UNAUTHENTICATED, "no token"));
 * }</pre>
 *
 * <p>The contract:
 *
 * <ul>
 *   <li>A middleware MAY call {@code next} zero times (answering itself) or once. It MAY call it more than
 *       once only for an input it can send again: a unary or oneway request's body is owned by the first
 *       call, so a retrying middleware MUST give each attempt a body of its own (e.g. a copy taken before
 *       the first attempt), and MUST release the responses of the attempts it discards.
 *   <li>A middleware that does not pass the request on owns its body and MUST release it; one that replaces
 *       a response MUST release the body of the one it drops.
 *   <li>It MUST return a future (never null, never throw: a thrown exception is treated as a failed
 *       future by the call path, but other middleware may not expect it) and MUST NOT block: it runs on the
 *       caller's thread outbound and on a handler thread (or, for non-blocking procedures, an I/O thread)
 *       inbound. The future MAY complete on any thread.
 *   <li>Outbound, a middleware MAY return a future of its own ({@code thenApply}, {@code whenComplete});
 *       the call path stops the transport's exchange itself when the deadline passes or the caller gives
 *       up, so cancellation need not travel through it.
 *   <li>Implementations MUST be thread-safe: one instance serves every call, concurrently.
 * </ul>
 *
 * @param <I> the input type
 * @param <O> the output type
 */
@FunctionalInterface
public interface Middleware<I, O> {
  /** Handles {@code input}, usually by calling {@code next}. */
  CompletableFuture<O> handle(I input, Handler<I, O> next);

  /**
   * Wraps {@code handler} in {@code chain}, in list order: the first middleware is the outermost, it sees
   * the input first and the output last. Nulls are skipped.
   */
  static <I, O> Handler<I, O> apply(Handler<I, O> handler, List<? extends Middleware<I, O>> chain) {
    requireNonNull(handler, "handler");
    Handler<I, O> wrapped = handler;
    List<? extends Middleware<I, O>> list = new ArrayList<>(chain);
    for (int i = list.size() - 1; i >= 0; i--) {
      Middleware<I, O> mw = list.get(i);
      if (mw != null) {
        Handler<I, O> next = wrapped;
        wrapped = input -> mw.handle(input, next);
      }
    }
    return wrapped;
  }

  /** One middleware made of {@code chain}, first outermost. */
  @SafeVarargs
  static <I, O> Middleware<I, O> chain(Middleware<I, O>... chain) {
    List<Middleware<I, O>> list = java.util.Arrays.asList(chain);
    return (input, next) -> apply(next, list).handle(input);
  }
}
