package io.yarpc.observability.observer.internal;

import static java.util.Objects.requireNonNull;

import io.yarpc.Call;
import io.yarpc.Dispatcher;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.ClientStream;
import io.yarpc.transport.ForwardingClientStream;
import io.yarpc.transport.ForwardingServerStream;
import io.yarpc.transport.Handler;
import io.yarpc.transport.MessageStream;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.RpcType;
import io.yarpc.transport.ServerStream;
import io.yarpc.transport.StreamMessage;
import java.util.Arrays;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The six middleware (unary, oneway and stream; inbound and outbound) that tell a {@link CallObserver}
 * about every call of one dispatcher. They follow core's middleware contract: they never block, never
 * throw, and own no body — they read a body's {@link io.yarpc.transport.Body#length() length} while they
 * hold it (a request before passing it on, a response before handing it back, a stream message before
 * sending it or before the receiver gets it) and release nothing, since every body passes on to its next
 * owner unchanged. Streams are wrapped to watch their messages; the wrapper hands every call through.
 *
 * <p><b>One per dispatcher builder.</b> Installing a second observer on a builder (metrics, then call logs)
 * adds it to the middleware already there, at the first install's place in the chains: each call then
 * pays for one layer (one future, one record of the call, one set of clock reads) however many observers
 * watch it. Observers are told in the order they were installed; one that throws does not keep the others
 * from being told.
 *
 * <p>What is observed, as in yarpc-go's observability middleware: a unary or oneway call ends when its
 * future completes; a server stream when its handler's future completes; a client stream when a receive
 * reports its end (normal or not) or when its holder cancels it. Calls the dispatcher refuses before its
 * middleware runs (unknown procedures, missing TTL, a stopping dispatcher, a full procedure) are not seen,
 * as in yarpc-go, whose router answers them before the inbound middleware.
 */
public final class ObservingMiddleware {
  private static final Logger log = LoggerFactory.getLogger(ObservingMiddleware.class);

  // the middleware installed on each builder (weakly held: a builder is dropped once built)
  private static final Map<Dispatcher.Builder, ObservingMiddleware> INSTALLED = new WeakHashMap<>();

  private final String dispatcher;
  private volatile CallObserver[] observers;
  private final AtomicBoolean warned = new AtomicBoolean();

  /** Middleware of dispatcher {@code dispatcher} that reports to {@code observer}. */
  public ObservingMiddleware(String dispatcher, CallObserver observer) {
    this.dispatcher = requireNonNull(dispatcher, "dispatcher");
    this.observers = new CallObserver[] {requireNonNull(observer, "observer")};
  }

  /**
   * Makes {@code observer} see every call of {@code builder}'s dispatcher, named {@code builder.name()}:
   * appends the six middleware to {@code builder}'s chains the first time, adds {@code observer} to them
   * later (see the class comment). Calls that began before do not tell it their end.
   *
   * @throws IllegalStateException when an observer of the same class is installed on {@code builder}
   *     already, which would see every call twice: {@code what} ({@code metrics}) and the configuration
   *     file's {@code section} that installs them ({@code metrics}) name it in the message
   */
  public static void install(
      Dispatcher.Builder builder, CallObserver observer, String what, String section) {
    requireNonNull(observer, "observer");
    ObservingMiddleware m;
    synchronized (INSTALLED) {
      m = INSTALLED.get(builder);
      if (m != null) {
        if (!m.add(observer)) {
          throw new IllegalStateException(
              what
                  + " are already installed on the builder of dispatcher \""
                  + builder.name()
                  + "\" (by an earlier install, or by the "
                  + section
                  + " section of the configuration file it was loaded from): install them once");
        }
        return;
      }
      m = new ObservingMiddleware(builder.name(), observer);
      INSTALLED.put(builder, m);
    }
    builder
        .unaryInboundMiddleware(m::unaryInbound)
        .onewayInboundMiddleware(m::onewayInbound)
        .streamInboundMiddleware(m::streamInbound)
        .unaryOutboundMiddleware(m::unaryOutbound)
        .onewayOutboundMiddleware(m::onewayOutbound)
        .streamOutboundMiddleware(m::streamOutbound);
  }

  /** Adds {@code observer}, unless one of its class is here already (then false). */
  private synchronized boolean add(CallObserver observer) {
    CallObserver[] now = observers;
    for (CallObserver o : now) {
      if (o.getClass() == observer.getClass()) {
        return false;
      }
    }
    CallObserver[] grown = Arrays.copyOf(now, now.length + 1);
    grown[now.length] = observer;
    observers = grown;
    return true;
  }

  /** Unary inbound. */
  public CompletableFuture<Response> unaryInbound(
      Request request, Handler<Request, Response> next) {
    return unary(Direction.INBOUND, request, next, Call.current());
  }

  /** Unary outbound. */
  public CompletableFuture<Response> unaryOutbound(
      Request request, Handler<Request, Response> next) {
    return unary(Direction.OUTBOUND, request, next, null);
  }

  /** Oneway inbound. */
  public CompletableFuture<Void> onewayInbound(Request request, Handler<Request, Void> next) {
    return oneway(Direction.INBOUND, request, next, Call.current());
  }

  /** Oneway outbound: ends when the server acknowledged the call. */
  public CompletableFuture<Void> onewayOutbound(Request request, Handler<Request, Void> next) {
    return oneway(Direction.OUTBOUND, request, next, null);
  }

  private CompletableFuture<Response> unary(
      Direction direction, Request request, Handler<Request, Response> next, Call serverCall) {
    ObservedCall call = begin(direction, RpcType.UNARY, request.meta(), request.body().length());
    return relay(
        invoke(next, request, call),
        (response, error) -> {
          call.finish(System.nanoTime(), response == null ? -1 : response.body().length());
          end(call, Outcome.of(response, error, serverCall, request.meta().deadline()));
        },
        response -> response.body().release());
  }

  private CompletableFuture<Void> oneway(
      Direction direction, Request request, Handler<Request, Void> next, Call serverCall) {
    ObservedCall call = begin(direction, RpcType.ONEWAY, request.meta(), request.body().length());
    return relay(
        invoke(next, request, call),
        (ack, error) -> {
          call.finish(System.nanoTime(), -1);
          end(call, Outcome.of(null, error, serverCall, request.meta().deadline()));
        },
        ack -> {});
  }

  /**
   * Stream inbound: the stream counts as open when the handler gets it (as in yarpc-go) and ends when the
   * handler's future completes.
   */
  public CompletableFuture<Void> streamInbound(
      ServerStream stream, Handler<ServerStream, Void> next) {
    Call serverCall = Call.current();
    ObservedCall call = begin(Direction.INBOUND, RpcType.STREAMING, stream.meta(), -1);
    opened(call, Outcome.SUCCESS);
    return relay(
        invoke(next, new WatchedServerStream(stream, call), call),
        (v, error) -> {
          call.finish(System.nanoTime(), -1);
          closed(call, Outcome.of(null, error, serverCall, stream.meta().deadline()));
        },
        v -> {});
  }

  /**
   * Stream outbound: the stream counts as open when the outbound returns it, and ends when a receive
   * reports the end or the holder cancels it.
   */
  public CompletableFuture<ClientStream> streamOutbound(
      RequestMeta meta, Handler<RequestMeta, ClientStream> next) {
    ObservedCall call = begin(Direction.OUTBOUND, RpcType.STREAMING, meta, -1);
    CompletableFuture<ClientStream> result = new CompletableFuture<>();
    // completed here, not derived from the outbound's future (see relay)
    invoke(next, meta, call)
        .whenComplete(
            (stream, error) -> {
              if (error == null && stream == null) {
                error = YarpcException.of(Code.INTERNAL, "outbound returned no stream");
              }
              if (error != null) {
                call.finish(System.nanoTime(), -1);
                opened(call, Outcome.ofThrowable(error, meta.deadline()));
                result.completeExceptionally(error);
                return;
              }
              opened(call, Outcome.SUCCESS);
              if (!result.complete(new WatchedClientStream(stream, call))) {
                stream.cancel(); // the caller gave up meanwhile and will never see the stream
                endClientStream(call, Outcome.ofThrowable(new CancellationException(), null));
              }
            });
    return result;
  }

  private ObservedCall begin(
      Direction direction, RpcType type, RequestMeta meta, long requestBytes) {
    ObservedCall call =
        new ObservedCall(
            observers, dispatcher, direction, type, meta, System.nanoTime(), requestBytes);
    for (CallObserver o : call.observers) {
      try {
        o.begin(call);
      } catch (RuntimeException e) {
        failed(o, e);
      }
    }
    return call;
  }

  /**
   * A future completed as {@code source} is, once {@code onEnd} has run. {@code onEnd} runs when {@code
   * source} completes even if whoever holds the returned future completed (cancelled) it before — a
   * future derived with {@code whenComplete} would skip its action then — and what the returned future can
   * no longer take is released here ({@code discard} for a value, the attached response for an error):
   * this middleware was its last owner.
   */
  private <O> CompletableFuture<O> relay(
      CompletableFuture<O> source,
      BiConsumer<? super O, ? super Throwable> onEnd,
      Consumer<? super O> discard) {
    CompletableFuture<O> out = new CompletableFuture<>();
    source.whenComplete(
        (value, error) -> {
          try {
            onEnd.accept(value, error);
          } catch (RuntimeException e) {
            failed(e);
          }
          boolean taken = error == null ? out.complete(value) : out.completeExceptionally(error);
          if (!taken) {
            if (value != null) {
              discard.accept(value);
            } else if (error != null) {
              YarpcException.releaseResponse(error);
            }
          }
        });
    return out;
  }

  /** {@code next.handle(input)}; a throw (or no future) becomes a failed future and marks a panic. */
  private static <I, O> CompletableFuture<O> invoke(
      Handler<I, O> next, I input, ObservedCall call) {
    CompletableFuture<O> f;
    try {
      f = next.handle(input);
    } catch (RuntimeException | Error e) {
      call.markPanicked();
      return CompletableFuture.failedFuture(e);
    }
    if (f == null) {
      call.markPanicked();
      return CompletableFuture.failedFuture(
          YarpcException.of(Code.INTERNAL, "handler returned no future"));
    }
    return f;
  }

  private void end(ObservedCall call, Outcome outcome) {
    for (CallObserver o : call.observers) {
      try {
        o.end(call, outcome);
      } catch (RuntimeException e) {
        failed(o, e);
      }
    }
  }

  private void opened(ObservedCall call, Outcome outcome) {
    for (CallObserver o : call.observers) {
      try {
        o.streamOpened(call, outcome);
      } catch (RuntimeException e) {
        failed(o, e);
      }
    }
  }

  private void message(ObservedCall call, boolean sent, long bytes, Throwable error) {
    if (error == null) {
      if (sent) {
        call.countSent();
      } else if (bytes >= 0) {
        call.countReceived();
      }
    }
    String tag = error == null ? null : Outcome.errorTagOf(error);
    for (CallObserver o : call.observers) {
      try {
        o.streamMessage(call, sent, bytes, tag);
      } catch (RuntimeException e) {
        failed(o, e);
      }
    }
  }

  private void closed(ObservedCall call, Outcome outcome) {
    for (CallObserver o : call.observers) {
      try {
        o.streamClosed(call, outcome);
      } catch (RuntimeException e) {
        failed(o, e);
      }
    }
  }

  private void endClientStream(ObservedCall call, Outcome outcome) {
    if (call.tryEnd()) {
      call.finish(System.nanoTime(), -1);
      closed(call, outcome);
    }
  }

  /** An observer failed: the call goes on; the first failure is logged (it is a bug). */
  private void failed(CallObserver observer, RuntimeException e) {
    if (warned.compareAndSet(false, true)) {
      log.warn(
          "observer {} of dispatcher {} failed; calls go on, later failures are not logged",
          observer,
          dispatcher,
          e);
    }
  }

  /** A middleware's own step failed where no observer was involved. */
  private void failed(RuntimeException e) {
    failed(null, e);
  }

  /** Sends {@code message} on {@code stream}, telling the observer how it went. */
  private CompletableFuture<Void> send(
      MessageStream stream, StreamMessage message, ObservedCall call) {
    long bytes = message.body().length();
    CompletableFuture<Void> f;
    try {
      f = stream.send(message);
    } catch (RuntimeException e) {
      message(call, true, bytes, e);
      throw e;
    }
    return relay(f, (v, error) -> message(call, true, bytes, error), v -> {});
  }

  /** A server stream whose sends and receives the observer hears about. */
  private final class WatchedServerStream extends ForwardingServerStream {
    private final ObservedCall call;

    WatchedServerStream(ServerStream stream, ObservedCall call) {
      super(stream);
      this.call = call;
    }

    @Override
    public CompletableFuture<Void> send(StreamMessage message) {
      return ObservingMiddleware.this.send(delegate(), message, call);
    }

    @Override
    public CompletableFuture<StreamMessage> receive() {
      return relay(
          delegate().receive(),
          (m, error) -> message(call, false, m == null ? -1 : m.body().length(), error),
          StreamMessage::release);
    }
  }

  /**
   * A client stream whose sends and receives the observer hears about, and whose end (a receive that
   * reports it, or a cancel) closes the observed stream once.
   */
  private final class WatchedClientStream extends ForwardingClientStream {
    private final ObservedCall call;

    WatchedClientStream(ClientStream stream, ObservedCall call) {
      super(stream);
      this.call = call;
    }

    @Override
    public CompletableFuture<Void> send(StreamMessage message) {
      return ObservingMiddleware.this.send(delegate(), message, call);
    }

    @Override
    public CompletableFuture<StreamMessage> receive() {
      return relay(
          delegate().receive(),
          (m, error) -> {
            message(call, false, m == null ? -1 : m.body().length(), error);
            if (error != null) {
              endClientStream(call, Outcome.ofThrowable(error, call.meta().deadline()));
            } else if (m == null) {
              endClientStream(call, Outcome.SUCCESS);
            }
          },
          StreamMessage::release);
    }

    @Override
    public void cancel() {
      delegate().cancel();
      endClientStream(call, Outcome.ofThrowable(new CancellationException(), null));
    }
  }
}
