package io.yarpc.encoding.protobuf.internal;

import io.grpc.Attributes;
import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.Status;
import io.yarpc.Call;
import io.yarpc.encoding.protobuf.ProtobufProcedures;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.Timers;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Headers;
import io.yarpc.transport.RequestMeta;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the unary and the streaming {@link ServerCall} share: driving a grpc-java {@link
 * ServerCallHandler} (a generated service method, possibly behind {@code ServerInterceptor}s) as grpc's
 * own server would, so {@code StreamObserver} implementations work unchanged.
 *
 * <ul>
 *   <li>Listener callbacks run one at a time, in order ({@link SerialExecutor}), with the YARPC {@link
 *       Call} current and a grpc {@link Context} attached that carries the call's deadline (and is
 *       cancelled with the call), {@link ProtobufProcedures#CALL} and {@link ProtobufProcedures#HEADERS}.
 *   <li>{@code startCall} receives the request's application headers as {@link Metadata}.
 *   <li>An exception thrown by a listener callback closes the call with {@code UNKNOWN} (as grpc-java's
 *       server does), which {@link ServerErrors} turns into yarpc-go's handler error.
 *   <li>Cancellation of the YARPC call (deadline, caller gone) cancels the context and calls {@code
 *       onCancel}.
 * </ul>
 */
abstract class ServerCallBase<Q, R> extends ServerCall<Q, R> implements SerialExecutor.Steps {
  private static final Logger log = LoggerFactory.getLogger(ServerCallBase.class);

  /**
   * The listener callbacks every call makes, queued on {@link #serial} as shared constants rather than
   * as a task object per callback: {@code startCall}, a unary call's message and half-close ({@link
   * #deliver}), and the end ({@code onComplete} or {@code onCancel}).
   */
  enum Step {
    START,
    DELIVER,
    COMPLETE,
    CANCEL
  }

  final MethodBinding<Q, R> method;
  final RequestMeta meta;
  final String encoding;
  final Call call;
  final SerialExecutor serial;
  final Context.CancellableContext context;
  private final Metadata requestHeaders;

  /** Inside a dispatched call: the dispatcher's deadline timer cancels the call, and this context. */
  private final boolean dispatched;

  private volatile AutoCloseable cancelRegistration;
  private ServerCall.Listener<Q> listener;
  private String compressor; // guarded by this
  private boolean messageCompression = true; // guarded by this

  /** Set once the listener was told the call was cancelled or completed; only touched serially. */
  private boolean listenerDone;

  ServerCallBase(MethodBinding<Q, R> method, RequestMeta meta, Call call, Executor callbacks) {
    this.method = method;
    this.meta = meta;
    this.encoding = meta.encoding();
    this.call = call;
    this.serial = new SerialExecutor(callbacks, this);
    this.requestHeaders = HeaderMetadata.toMetadata(meta.headers());
    Context base =
        Context.current()
            .withValues(ProtobufProcedures.CALL, call, ProtobufProcedures.HEADERS, requestHeaders);
    Deadline deadline = meta.deadline();
    // The context carries the call's deadline for the handler to read (and pass on). Inside a
    // dispatched call it arms no timer of its own: the dispatcher's deadline timer cancels the
    // YARPC call, which cancels this context. A handler invoked without a dispatcher (no current
    // call) keeps a real timer.
    this.dispatched = Call.current() == call;
    this.context =
        deadline == null
            ? base.withCancellation()
            : base.withDeadline(
                io.grpc.Deadline.after(deadline.remainingNanos(), TimeUnit.NANOSECONDS),
                dispatched ? Timers.unarmed() : Timers.scheduler());
  }

  /**
   * Starts the call: hands it to the method's handler ({@code startCall}) and begins watching for
   * cancellation. Called once the subclass is fully constructed.
   */
  final void begin() {
    // Cancellation arrives on a transport's event loop (the caller went away) or the timer thread
    // (the deadline); onCancelled may run the handler's own onCancel, so it hops to the callback
    // executor. Only the context's own timer needs a listener: a dispatched call's context times
    // out through the call (below), which tells onCancelled itself.
    if (!dispatched) {
      context.addListener(
          c -> {
            if (c.cancellationCause() instanceof java.util.concurrent.TimeoutException) {
              onCancelled(
                  YarpcException.of(
                      Code.DEADLINE_EXCEEDED,
                      "call to procedure \"%s\" of service \"%s\" from caller \"%s\" timed out",
                      meta.procedure(),
                      meta.service(),
                      meta.caller()));
            }
          },
          this::offTransportThread);
    }
    cancelRegistration =
        call.onCancel(
            () -> {
              YarpcException reason = call.cancellation();
              // At once: a handler blocked in a callback sees its context cancelled. A deadline is
              // a TimeoutException to grpc (Contexts.statusFromCancelled gives DEADLINE_EXCEEDED to
              // calls the handler makes with this context), as grpc's own server cancels it.
              boolean deadline = reason != null && reason.code() == Code.DEADLINE_EXCEEDED;
              context.cancel(
                  deadline
                      ? new java.util.concurrent.TimeoutException(reason.getMessage())
                      : reason);
              offTransportThread(() -> onCancelled(reason));
            });
    serial.step(Step.START);
    started();
  }

  /** Runs {@code task} on the method's callback executor; here when that executor refuses it. */
  private void offTransportThread(Runnable task) {
    try {
      method.callbacks().execute(task);
    } catch (RejectedExecutionException e) {
      task.run();
    }
  }

  /** Runs after {@code startCall} was scheduled; streams announce readiness here. */
  void started() {}

  /**
   * Runs {@code action} with the listener, serially, with the call and context current; a throw closes
   * the call. Skipped once the listener was told the call ended.
   */
  final void callback(Consumer<ServerCall.Listener<Q>> action) {
    serial.execute(() -> withListener(action));
  }

  /** Like {@link #callback} for a task already running on {@link #serial}. */
  final void withListener(Consumer<ServerCall.Listener<Q>> action) {
    withListener(null, action);
  }

  /** Runs a {@link Step} queued on {@link #serial} (its {@link SerialExecutor.Steps}; not for others). */
  @Override
  public final void runStep(Object step) {
    if (step == Step.COMPLETE || step == Step.CANCEL) {
      boolean completed = step == Step.COMPLETE;
      if (Call.current() == call) {
        endListenerNow(completed);
      } else {
        call.wrap(() -> endListenerNow(completed)).run();
      }
    } else {
      withListener((Step) step, null);
    }
  }

  /** The message and half-close of a unary call ({@link Step#DELIVER}); streams never deliver so. */
  void deliver(ServerCall.Listener<Q> listener) {
    throw new IllegalStateException("not a unary call");
  }

  /** Runs {@code step} (START or DELIVER), or {@code action} when it is null. */
  private void withListener(Step step, Consumer<ServerCall.Listener<Q>> action) {
    if (listenerDone || (step != Step.START && listener == null)) {
      return;
    }
    if (Call.current() == call) {
      // a unary call's callbacks run on the dispatcher's thread, inside the call
      runListener(step, action);
    } else {
      call.wrap(() -> runListener(step, action)).run();
    }
  }

  /**
   * Runs {@code step} or {@code action} with the listener and the context attached; a throw closes the
   * call.
   */
  private void runListener(Step step, Consumer<ServerCall.Listener<Q>> action) {
    Context previous = context.attach();
    try {
      if (step == Step.START) {
        listener = method.handler().startCall(this, requestHeaders);
        if (listener == null) {
          throw new NullPointerException("startCall returned a null listener");
        }
      } else if (step == Step.DELIVER) {
        deliver(listener);
      } else {
        action.accept(listener);
      }
    } catch (Throwable t) {
      log.debug("grpc handler of {} threw", meta.procedure(), t);
      closeAfterThrow(t);
    } finally {
      context.detach(previous);
    }
  }

  /** Tells the listener the call ended: {@code onComplete} after a close, else {@code onCancel}; once. */
  final void endListener(boolean completed) {
    serial.step(completed ? Step.COMPLETE : Step.CANCEL);
  }

  private void endListenerNow(boolean completed) {
    if (listenerDone) {
      return;
    }
    listenerDone = true;
    ServerCall.Listener<Q> l = listener;
    Context previous = context.attach();
    try {
      if (l != null) {
        if (completed) {
          l.onComplete();
        } else {
          l.onCancel();
        }
      }
    } catch (Throwable t) {
      log.warn(
          "grpc listener of {} threw on {}",
          meta.procedure(),
          completed ? "onComplete" : "onCancel",
          t);
    } finally {
      context.detach(previous);
      context.cancel(null);
      AutoCloseable registration = cancelRegistration;
      if (registration != null) {
        try {
          registration.close();
        } catch (Exception ignored) {
          // removing a listener cannot fail
        }
      }
    }
  }

  /** A listener callback threw: close the call as grpc's server does. */
  private void closeAfterThrow(Throwable t) {
    if (!isClosed()) {
      close(Status.UNKNOWN.withCause(t), new Metadata());
    }
  }

  /** Whether close was called (or the call was cancelled). */
  abstract boolean isClosed();

  /** The YARPC call was cancelled, or the deadline passed. */
  abstract void onCancelled(YarpcException reason);

  /**
   * The headers of a unary response other than the initial ones: the YARPC call's response headers, then
   * the trailers the handler closed with (null for none).
   */
  final Headers responseHeaders(Metadata trailers) {
    Headers h = call.responseHeaders();
    Headers trailing = HeaderMetadata.toHeaders(trailers);
    return trailing.isEmpty() ? h : h.isEmpty() ? trailing : h.toBuilder().addAll(trailing).build();
  }

  @Override
  public final MethodDescriptor<Q, R> getMethodDescriptor() {
    return method.descriptor();
  }

  @Override
  public final Attributes getAttributes() {
    return Attributes.EMPTY;
  }

  @Override
  public final String getAuthority() {
    return meta.service();
  }

  /**
   * The compressor to send the response with, as the handler asked ({@link #setCompression}), unless it
   * turned message compression off ({@link #setMessageCompression}); null for the transport's default.
   */
  final synchronized String compression() {
    return messageCompression ? compressor : null;
  }

  @Override
  public synchronized void setMessageCompression(boolean enabled) {
    messageCompression = enabled;
  }

  @Override
  public synchronized void setCompression(String compressor) {
    this.compressor = java.util.Objects.requireNonNull(compressor, "compressor");
  }
}
