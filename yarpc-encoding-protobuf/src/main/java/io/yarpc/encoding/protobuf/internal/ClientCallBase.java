package io.yarpc.encoding.protobuf.internal;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.yarpc.ClientConfig;
import io.yarpc.encoding.protobuf.YarpcChannel;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.RequestMeta;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the unary and the streaming {@link ClientCall} share: the request metadata built from the stub's
 * call options and headers, listener callbacks run one at a time on the call's executor (the stub's
 * {@link CallOptions#getExecutor()} — a blocking stub's own thread — else the channel's) in the caller's
 * grpc {@link Context}, and exactly one {@code onClose}.
 */
abstract class ClientCallBase<Q, R> extends ClientCall<Q, R> {
  private static final Logger log = LoggerFactory.getLogger(ClientCallBase.class);

  /** What a channel gives its calls. */
  record Settings(
      ClientConfig config, String encoding, Executor executor, Duration defaultTimeout) {}

  final Settings settings;
  final MethodDescriptor<Q, R> method;
  final CallOptions options;
  final MessageCodec<Q> requestCodec;
  final MessageCodec<R> responseCodec;
  final String encoding;
  final SerialExecutor serial;
  final Context context;
  ClientCall.Listener<R> listener;

  /** The stub's stream tracers; set by {@link #begin}. */
  CallTracers tracers;

  /** Set once onClose was scheduled; guarded by this. */
  private boolean closed;

  private Context.CancellationListener contextListener;

  ClientCallBase(
      Settings settings,
      MethodDescriptor<Q, R> method,
      CallOptions options,
      MessageCodec<Q> requestCodec,
      MessageCodec<R> responseCodec) {
    this.settings = settings;
    this.method = method;
    this.options = options;
    this.requestCodec = requestCodec;
    this.responseCodec = responseCodec;
    this.encoding = settings.encoding();
    Executor executor = options.getExecutor() != null ? options.getExecutor() : settings.executor();
    this.serial = new SerialExecutor(executor);
    this.context = Context.current();
  }

  /**
   * Common checks of {@code start}: remembers the listener, creates the stub's stream tracers, fails at
   * once (sending nothing) when the encoding does not fit the method, the deadline has already passed or
   * the caller's context is already cancelled, and cancels the call with the context.
   *
   * @return false when the call was closed here
   */
  final boolean begin(ClientCall.Listener<R> listener, Metadata headers) {
    synchronized (this) {
      if (this.listener != null) {
        throw new IllegalStateException("call already started");
      }
      this.listener = java.util.Objects.requireNonNull(listener, "listener");
      this.tracers = CallTracers.create(options, headers);
    }
    if (!requestCodec.encodings().contains(encoding)
        || !responseCodec.encodings().contains(encoding)) {
      closeWith(
          Status.UNIMPLEMENTED.withDescription(
              "method " + method.getFullMethodName() + " has no \"" + encoding + "\" encoding"),
          new Metadata());
      return false;
    }
    io.grpc.Deadline deadline = effectiveDeadline();
    if (deadline != null && deadline.isExpired()) {
      // as grpc-java's own channel does: nothing is sent for a call that has no time left
      closeWith(
          Status.DEADLINE_EXCEEDED.withDescription(
              String.format(
                  "ClientCall started after the deadline was exceeded: %d ms ago",
                  -deadline.timeRemaining(TimeUnit.MILLISECONDS))),
          new Metadata());
      return false;
    }
    if (context.isCancelled()) {
      closeWith(io.grpc.Contexts.statusFromCancelled(context), new Metadata());
      return false;
    }
    Context.CancellationListener l =
        c -> {
          Status s = io.grpc.Contexts.statusFromCancelled(c);
          cancelFromContext(s == null ? Status.CANCELLED : s);
        };
    contextListener = l;
    context.addListener(l, Runnable::run); // does nothing for a context that cannot be cancelled
    return true;
  }

  /** The caller's context was cancelled (or its deadline passed). */
  abstract void cancelFromContext(Status status);

  /** Request metadata for this call: caller and service from the config, deadline, headers, routing. */
  final RequestMeta requestMeta(Metadata headers) {
    return RequestMeta.builder()
        .caller(settings.config().caller())
        .service(settings.config().service())
        .procedure(io.yarpc.encoding.protobuf.Protobuf.procedureName(method))
        .encoding(encoding)
        .headers(HeaderMetadata.toHeaders(headers))
        .shardKey(options.getOption(YarpcChannel.SHARD_KEY))
        .routingKey(options.getOption(YarpcChannel.ROUTING_KEY))
        .routingDelegate(options.getOption(YarpcChannel.ROUTING_DELEGATE))
        .deadline(deadline())
        .build();
  }

  /** The earlier of the stub's and the context's deadline, else the channel's default timeout, else none. */
  private Deadline deadline() {
    io.grpc.Deadline effective = effectiveDeadline();
    if (effective != null) {
      return Deadline.after(effective.timeRemaining(TimeUnit.NANOSECONDS), TimeUnit.NANOSECONDS);
    }
    Duration fallback = settings.defaultTimeout();
    return fallback == null ? null : Deadline.after(fallback);
  }

  /** The earlier of the stub's and the context's deadline, or null. */
  private io.grpc.Deadline effectiveDeadline() {
    io.grpc.Deadline stub = options.getDeadline();
    io.grpc.Deadline inherited = context.getDeadline();
    return stub == null ? inherited : inherited == null ? stub : stub.minimum(inherited);
  }

  /** Runs {@code action} with the listener, serially, in the caller's context; a throw cancels the call. */
  final void callback(Consumer<ClientCall.Listener<R>> action) {
    serial.execute(() -> withListener(action));
  }

  /** Like {@link #callback} for a task already on {@link #serial}. */
  final void withListener(Consumer<ClientCall.Listener<R>> action) {
    synchronized (this) {
      if (closed) {
        return;
      }
    }
    Context previous = context.attach();
    try {
      action.accept(listener);
    } catch (Throwable t) {
      log.debug("grpc client listener of {} threw", method.getFullMethodName(), t);
      cancel("listener threw", t);
    } finally {
      context.detach(previous);
    }
  }

  /** Closes the call once: {@code onClose} is scheduled after every callback already scheduled. */
  final boolean closeWith(Status status, Metadata trailers) {
    CallTracers callTracers;
    synchronized (this) {
      if (closed) {
        return false;
      }
      closed = true;
      callTracers = tracers;
    }
    Context.CancellationListener l = contextListener;
    if (l != null) {
      context.removeListener(l);
    }
    if (callTracers != null) { // null when cancelled before start
      callTracers.closed(status, trailers);
    }
    serial.execute(
        () -> {
          Context previous = context.attach();
          try {
            listener.onClose(status, trailers);
          } catch (Throwable t) {
            log.warn("grpc client listener of {} threw in onClose", method.getFullMethodName(), t);
          } finally {
            context.detach(previous);
          }
        });
    return true;
  }

  final synchronized boolean isClosed() {
    return closed;
  }
}
