package io.yarpc.observability.tracing.internal;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Context;
import io.yarpc.errors.ApplicationErrorMeta;
import io.yarpc.errors.Code;
import io.yarpc.errors.FaultType;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.Futures;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Response;
import java.util.concurrent.CancellationException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One call's span and the context holding it, ended once however the call ends: with its result (a
 * response, a stream's end, a failure) or when the call is cancelled first.
 *
 * <p>How an end is recorded:
 *
 * <ul>
 *   <li>success: {@code rpc.status_code = OK}, status unset;
 *   <li>a {@link YarpcException}: {@code rpc.status_code} and {@code error.type} = its code's name; a
 *       cancelled client future: {@code CANCELLED}, or {@code DEADLINE_EXCEEDED} once the deadline passed;
 *       any other throwable (a handler's bug), also when an encoding wrapped it as {@code unknown}: {@code
 *       UNKNOWN}, {@code error.type} = the bug's class name, and an exception event;
 *   <li>a response flagged as an application error: {@code yarpc.application_error = true}, its name in
 *       {@code yarpc.application_error.name}, {@code rpc.status_code} = its code's name when it has one
 *       (else {@code OK}: the call itself succeeded) and {@code error.type} = its name, else its code's
 *       name, else {@code application_error};
 *   <li>span status {@code ERROR} (with the error's message): on a client span for every failure and
 *       application error; on a server span only for codes core classes as the server's fault ({@link
 *       FaultType#SERVER}: unknown, deadline-exceeded, internal, unavailable, data-loss), as OpenTelemetry
 *       asks of server spans (a caller's bad request is not the server's error).
 * </ul>
 */
final class TracedCall {
  final Span span;
  final Context context;
  private final boolean client;
  private final AtomicBoolean ended = new AtomicBoolean();

  TracedCall(Span span, Context context, boolean client) {
    this.span = span;
    this.context = context;
    this.client = client;
  }

  /** Ends the span with a call's outcome; only the first end counts. */
  void end(Object result, Throwable error, Deadline deadline) {
    if (!ended.compareAndSet(false, true)) {
      return;
    }
    if (error != null) {
      failed(Futures.unwrap(error), deadline);
    } else if (result instanceof Response && ((Response) result).isApplicationError()) {
      applicationError(((Response) result).applicationErrorMeta());
    } else {
      span.setAttribute(CallTracer.RPC_STATUS_CODE, Code.OK.name());
    }
    span.end();
  }

  private void failed(Throwable cause, Deadline deadline) {
    Code code;
    String type;
    String message;
    if (cause instanceof YarpcException) {
      YarpcException e = (YarpcException) cause;
      code = e.code();
      type = code.name();
      message = e.getMessage();
      Throwable unexpected = e.getCause();
      if (e.hasUnexpectedCauseText() && unexpected != null) {
        // a handler's bug wrapped by an encoding: the bug's class says more than "UNKNOWN"
        type = unexpected.getClass().getName();
        span.recordException(unexpected);
      }
    } else if (cause instanceof CancellationException) {
      code = deadline != null && deadline.isExpired() ? Code.DEADLINE_EXCEEDED : Code.CANCELLED;
      type = code.name();
      message = code == Code.CANCELLED ? "call was cancelled" : "call ran past its deadline";
    } else {
      code = Code.UNKNOWN;
      type = cause.getClass().getName();
      message = YarpcException.describe(cause);
      span.recordException(cause);
    }
    span.setAttribute(CallTracer.RPC_STATUS_CODE, code.name());
    span.setAttribute(CallTracer.ERROR_TYPE, type);
    if (client || code.faultType() == FaultType.SERVER) {
      span.setStatus(StatusCode.ERROR, message);
    }
  }

  private void applicationError(ApplicationErrorMeta meta) {
    Code code = meta == null ? null : meta.code();
    String name = meta == null ? null : meta.name();
    boolean named = name != null && !name.isEmpty();
    span.setAttribute(CallTracer.YARPC_APPLICATION_ERROR, true);
    if (named) {
      span.setAttribute(CallTracer.YARPC_APPLICATION_ERROR_NAME, name);
    }
    span.setAttribute(CallTracer.RPC_STATUS_CODE, code == null ? Code.OK.name() : code.name());
    span.setAttribute(
        CallTracer.ERROR_TYPE, named ? name : code != null ? code.name() : "application_error");
    if (client || code != null && code.faultType() == FaultType.SERVER) {
      span.setStatus(StatusCode.ERROR, named ? "application error " + name : "application error");
    }
  }
}
