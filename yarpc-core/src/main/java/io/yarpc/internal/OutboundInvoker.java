package io.yarpc.internal;

import io.yarpc.Call;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.middleware.Middleware;
import io.yarpc.peer.internal.PendingChoices;
import io.yarpc.transport.ClientStream;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Handler;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.TransportComponent;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledFuture;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Builds what a {@link io.yarpc.ClientConfig} calls: a transport outbound wrapped, outermost first, in
 *
 * <ol>
 *   <li>defaults and inheritance: empty caller/service from the config; the current {@link Call}'s
 *       procedure as caller procedure, its remaining deadline (the earlier of both) and its cancellation;
 *       the transport's name;
 *   <li>validation: {@code missing ...} fields, and for unary and oneway {@code missing TTL};
 *   <li>for unary and oneway a local deadline: the call fails with {@code deadline-exceeded} when it
 *       passes, and the transport's future is cancelled;
 *   <li>the user's outbound middleware, first outermost;
 *   <li>the transport outbound.
 * </ol>
 *
 * A response that arrives after the call already ended is released here.
 */
public final class OutboundInvoker {
  private OutboundInvoker() {}

  /** The unary call path. */
  public static Handler<Request, Response> unary(
      String caller,
      String service,
      TransportComponent outbound,
      Handler<Request, Response> transport,
      List<Middleware<Request, Response>> chain) {
    return build(
        caller,
        service,
        outbound.transportName(),
        Request::meta,
        Request::withMeta,
        r -> r.body().release(),
        r -> r.body().release(),
        true,
        transport,
        chain);
  }

  /** The oneway call path. */
  public static Handler<Request, Void> oneway(
      String caller,
      String service,
      TransportComponent outbound,
      Handler<Request, Void> transport,
      List<Middleware<Request, Void>> chain) {
    return build(
        caller,
        service,
        outbound.transportName(),
        Request::meta,
        Request::withMeta,
        r -> r.body().release(),
        v -> {},
        true,
        transport,
        chain);
  }

  /** The stream call path: no local deadline timer (the transport bounds the stream). */
  public static Handler<RequestMeta, ClientStream> stream(
      String caller,
      String service,
      TransportComponent outbound,
      Handler<RequestMeta, ClientStream> transport,
      List<Middleware<RequestMeta, ClientStream>> chain) {
    return build(
        caller,
        service,
        outbound.transportName(),
        Function.identity(),
        (m, meta) -> meta,
        m -> {},
        ClientStream::cancel,
        false,
        transport,
        chain);
  }

  private static <I, O> Handler<I, O> build(
      String caller,
      String service,
      String transportName,
      Function<I, RequestMeta> metaOf,
      BiFunction<I, RequestMeta, I> withMeta,
      Consumer<I> releaseInput,
      Consumer<O> discard,
      boolean unaryLike,
      Handler<I, O> transport,
      List<Middleware<I, O>> chain) {
    List<Middleware<I, O>> middleware = List.copyOf(chain);
    return input -> {
      Call current = Call.current();
      RequestMeta meta = complete(metaOf.apply(input), caller, service, transportName, current);
      try {
        MapRouter.validate(meta);
        if (unaryLike && meta.deadline() == null) {
          throw missingDeadline(meta);
        }
      } catch (YarpcException e) {
        releaseInput.accept(input);
        return CompletableFuture.failedFuture(e);
      }
      Deadline deadline = meta.deadline();
      if (unaryLike && deadline.isExpired()) {
        releaseInput.accept(input);
        return CompletableFuture.failedFuture(timeout(meta, Duration.ZERO, null));
      }
      if (current != null && current.isCancelled()) {
        releaseInput.accept(input);
        return CompletableFuture.failedFuture(current.cancellation());
      }

      // the time the call had when it began, for the timeout message (the timer is armed after the
      // transport's synchronous part, which may take a while on a cold JVM)
      OutboundCall<I, O> call =
          new OutboundCall<>(
              meta,
              unaryLike ? Math.max(0, deadline.remainingNanos()) : 0,
              current,
              transport,
              discard,
              middleware.isEmpty() ? null : new CopyOnWriteArrayList<>());
      Handler<I, O> next = call.wire == null ? transport : Middleware.apply(call, middleware);
      CompletableFuture<O> inner;
      try {
        inner = next.handle(withMeta.apply(input, meta));
      } catch (Throwable t) {
        inner = CompletableFuture.failedFuture(t);
      }
      if (inner == null) {
        inner =
            CompletableFuture.failedFuture(
                YarpcException.of(Code.INTERNAL, "outbound middleware returned no future"));
      }
      call.started(inner, unaryLike ? deadline : null);
      return call;
    };
  }

  /**
   * One outbound call, and the future its caller gets: the object is the call's result, the innermost
   * handler under the middleware ({@link #handle}), the transport future's continuation ({@link
   * #accept}), the current call's cancel listener ({@link #run}) and its deadline timer's target.
   *
   * <p>The deadline and the caller's cancellation stop the exchange through the futures the transport
   * itself returned ({@link #stop}): a middleware may hand back a future of its own (thenApply,
   * whenComplete), whose cancellation does not reach the transport's.
   */
  private static final class OutboundCall<I, O> extends CompletableFuture<O>
      implements Handler<I, O>, BiConsumer<O, Throwable>, Runnable {
    private final RequestMeta meta;
    private final long ttlNanos;
    private final Call current;
    private final Handler<I, O> transport;
    private final Consumer<O> discard;
    final List<CompletableFuture<?>> wire; // the transport's futures under middleware, else null
    private CompletableFuture<O> transportFuture; // what the chain returned; set by started
    private ScheduledFuture<?> timer; // set by started, before anything reads it
    private AutoCloseable cancelRegistration;

    OutboundCall(
        RequestMeta meta,
        long ttlNanos,
        Call current,
        Handler<I, O> transport,
        Consumer<O> discard,
        List<CompletableFuture<?>> wire) {
      this.meta = meta;
      this.ttlNanos = ttlNanos;
      this.current = current;
      this.transport = transport;
      this.discard = discard;
      this.wire = wire;
    }

    /** The transport under the middleware: its futures are recorded for {@link #stop}. */
    @Override
    public CompletableFuture<O> handle(I in) {
      CompletableFuture<O> f = transport.handle(in);
      if (f != null) {
        wire.add(f);
        if (isDone()) {
          f.cancel(false); // the call ended while the middleware was still deciding
        }
      }
      return f;
    }

    /** Arms the deadline (none when null) and the current call's cancellation, then waits for {@code f}. */
    void started(CompletableFuture<O> f, Deadline deadline) {
      transportFuture = f;
      if (deadline != null) {
        timer =
            Timers.schedule(OutboundCall::timedOut, this, Math.max(0, deadline.remainingNanos()));
      }
      if (current != null) {
        cancelRegistration = current.onCancel(this);
      }
      f.whenComplete(this);
    }

    private static void timedOut(OutboundCall<?, ?> call) {
      if (call.completeInside(
          timeout(
              call.meta,
              Duration.ofNanos(call.ttlNanos),
              waitingFor(call.transportFuture, call.wire)))) {
        call.stop();
      }
    }

    /** The current call was cancelled. */
    @Override
    public void run() {
      if (completeInside(current.cancellation())) {
        stop();
      }
    }

    /**
     * Cancels the transport's futures first: the middleware's own futures derived from them
     * (whenComplete, thenApply) then complete through the chain and their actions run. Cancelled first,
     * a derived future would skip its action (a metrics middleware would never see the call end).
     */
    private void stop() {
      if (wire != null) {
        wire.forEach(f -> f.cancel(false));
      }
      transportFuture.cancel(false);
    }

    /** The transport's future completed. */
    @Override
    public void accept(O value, Throwable error) {
      if (timer != null) {
        timer.cancel(false);
      }
      if (cancelRegistration != null) {
        try {
          cancelRegistration.close();
        } catch (Exception ignored) {
          // removing a listener cannot fail
        }
      }
      boolean taken =
          error == null
              ? super.complete(value)
              : super.completeExceptionally(YarpcException.from(error));
      if (!taken) {
        if (value != null) {
          discard.accept(value);
        } else if (error != null && Futures.unwrap(error) instanceof YarpcException) {
          Response partial = ((YarpcException) Futures.unwrap(error)).response();
          if (partial != null) {
            partial.body().release();
          }
        }
      }
    }

    private boolean completeInside(Throwable error) {
      return super.completeExceptionally(error);
    }

    /** The caller gave up: the exchange stops. */
    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      return endedOutside(super.cancel(mayInterruptIfRunning));
    }

    @Override
    public boolean completeExceptionally(Throwable error) {
      return endedOutside(super.completeExceptionally(error));
    }

    /** Ended by the caller (this class completes itself through {@code super}'s methods). */
    private boolean endedOutside(boolean ended) {
      if (ended && isCancelled()) {
        stop();
      }
      return ended;
    }
  }

  private static RequestMeta complete(
      RequestMeta meta, String caller, String service, String transportName, Call current) {
    RequestMeta.Builder b = null;
    if (meta.caller().isEmpty() && !caller.isEmpty()) {
      b = meta.toBuilder().caller(caller);
    }
    if (meta.service().isEmpty() && !service.isEmpty()) {
      b = (b == null ? meta.toBuilder() : b).service(service);
    }
    if (!transportName.equals(meta.transport())) {
      b = (b == null ? meta.toBuilder() : b).transport(transportName);
    }
    if (current != null) {
      Deadline inherited = current.deadline();
      if (inherited != null
          && (meta.deadline() == null || inherited.compareTo(meta.deadline()) < 0)) {
        b = (b == null ? meta.toBuilder() : b).deadline(inherited);
      }
      if (meta.callerProcedure().isEmpty()) {
        b = (b == null ? meta.toBuilder() : b).callerProcedure(current.meta().procedure());
      }
    }
    return b == null ? meta : b.build();
  }

  /**
   * yarpc-go's client timeout text, followed by why the call never left when it was still waiting for a
   * peer ({@code waitingFor} non-null).
   */
  private static YarpcException timeout(RequestMeta meta, Duration ttl, String waitingFor) {
    String message =
        String.format(
            "client timeout for procedure \"%s\" of service \"%s\" after %s",
            meta.procedure(), meta.service(), GoDurations.format(ttl));
    return YarpcException.of(
        Code.DEADLINE_EXCEEDED,
        waitingFor == null ? message : message + " while waiting for a peer: " + waitingFor);
  }

  /** Why the transport's call still waits for a peer, or null (see PendingChoices). */
  private static String waitingFor(
      CompletableFuture<?> transportFuture, List<CompletableFuture<?>> wire) {
    String reason = PendingChoices.reason(transportFuture);
    if (reason == null && wire != null) {
      for (CompletableFuture<?> f : wire) {
        reason = PendingChoices.reason(f);
        if (reason != null) {
          break;
        }
      }
    }
    return reason;
  }

  /**
   * {@code missing TTL} as the caller reads it, before anything is sent: which call, and how to give it a
   * deadline (yarpc-go's wire text is unchanged: it is the inbound's answer).
   */
  static YarpcException missingDeadline(RequestMeta meta) {
    return YarpcException.of(
        Code.INVALID_ARGUMENT,
        "missing TTL: the call to procedure \"%s\" of service \"%s\" has no deadline; set one with"
            + " CallOptions.timeout(...) (a stub: withDeadlineAfter), or make the call from inside a"
            + " handler, whose deadline it inherits",
        meta.procedure(),
        meta.service());
  }
}
