package io.yarpc.observability.observer.internal;

import io.yarpc.Call;
import io.yarpc.errors.ApplicationErrorMeta;
import io.yarpc.errors.Code;
import io.yarpc.errors.FaultType;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.Futures;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Response;
import java.util.concurrent.CancellationException;

/**
 * How a call (or a stream, or one stream message) ended, classified as yarpc-go's observability
 * middleware classifies it ({@code internal/observability/call.go}, {@code endStats}):
 *
 * <ul>
 *   <li>no error and no application error: a success;
 *   <li>a {@link YarpcException}: its code decides through {@link Code#faultType()} (core's copy of
 *       yarpc-go's {@code GetFaultTypeFromCode}); the {@code error} tag is the code's name, the error name
 *       that of the attached response's application error, if any;
 *   <li>a response flagged as an application error: by the code in its meta when there is one; without a
 *       code a caller failure with {@code error} {@value #APPLICATION_ERROR};
 *   <li>any other throwable (a bug, not an answer): a server failure with {@code error} {@value
 *       #UNKNOWN_INTERNAL}, as yarpc-go counts an error that is not a YARPC status;
 *   <li>a cancelled future: {@code deadline-exceeded} when the call's deadline has passed, else {@code
 *       cancelled}; and on the server side, a call that was cancelled or ran past its deadline is counted
 *       as what its caller was told ({@link Call#cancellation()}), whatever the handler returned later, as
 *       yarpc-go overrides a handler's result with the context's error.
 * </ul>
 *
 * Immutable; a success is a shared instance.
 */
public final class Outcome {
  /** The {@code error} value of an application error without a code (yarpc-go's). */
  public static final String APPLICATION_ERROR = "application_error";

  /** The {@code error} value of a failure that is not a YARPC error (yarpc-go's). */
  public static final String UNKNOWN_INTERNAL = "unknown_internal_yarpc";

  /** The one success. */
  public static final Outcome SUCCESS = new Outcome(null, null, null, null, null, null, false);

  private final FaultType fault;
  private final String errorTag;
  private final Code code;
  private final String errorName;
  private final String message;
  private final String details;
  private final boolean applicationError;

  private Outcome(
      FaultType fault,
      String errorTag,
      Code code,
      String errorName,
      String message,
      String details,
      boolean applicationError) {
    this.fault = fault;
    this.errorTag = errorTag;
    this.code = code;
    this.errorName = errorName;
    this.message = message;
    this.details = details;
    this.applicationError = applicationError;
  }

  /** Whether the call succeeded. */
  public boolean isSuccess() {
    return fault == null;
  }

  /** Whether the caller is at fault (yarpc-go's caller failure); false for successes. */
  public boolean isCallerFailure() {
    return fault == FaultType.CLIENT;
  }

  /** Whether the server is at fault (yarpc-go's server failure); false for successes. */
  public boolean isServerFailure() {
    return fault == FaultType.SERVER;
  }

  /**
   * The {@code error} tag: a code's name ({@code invalid-argument}), {@value #APPLICATION_ERROR} or
   * {@value #UNKNOWN_INTERNAL}; null for a success.
   */
  public String errorTag() {
    return errorTag;
  }

  /** The code, or null for a success and for failures that have none. */
  public Code code() {
    return code;
  }

  /** The application error's name, or null. */
  public String errorName() {
    return errorName;
  }

  /** The error's message, or null. */
  public String message() {
    return message;
  }

  /** The application error's details, or null. */
  public String details() {
    return details;
  }

  /**
   * Whether the call ended with a response flagged as an application error rather than with an error
   * (yarpc-go logs {@code error="application_error"} for those).
   */
  public boolean isApplicationError() {
    return applicationError;
  }

  /**
   * How a unary or oneway call, or a stream, ended: with {@code response} (null for none) or {@code
   * error} (null for none). {@code serverCall} is the server's {@link Call} (null on the client), {@code
   * deadline} the call's deadline (null for none).
   */
  public static Outcome of(Response response, Throwable error, Call serverCall, Deadline deadline) {
    if (serverCall != null && serverCall.isCancelled()) {
      YarpcException why = serverCall.cancellation();
      if (why != null) {
        return ofException(why);
      }
    }
    if (error != null) {
      return ofThrowable(error, deadline);
    }
    if (response != null && response.isApplicationError()) {
      return ofApplicationError(response.applicationErrorMeta());
    }
    return SUCCESS;
  }

  /** How a call that failed with {@code error} ended; see the class comment. */
  public static Outcome ofThrowable(Throwable error, Deadline deadline) {
    Throwable cause = Futures.unwrap(error);
    if (cause instanceof YarpcException) {
      return ofException((YarpcException) cause);
    }
    if (cause instanceof CancellationException) {
      return deadline != null && deadline.isExpired()
          ? ofCode(Code.DEADLINE_EXCEEDED, "the call's deadline passed", null, null)
          : ofCode(Code.CANCELLED, "the call was cancelled", null, null);
    }
    return new Outcome(
        FaultType.SERVER,
        UNKNOWN_INTERNAL,
        null,
        null,
        YarpcException.describe(cause),
        null,
        false);
  }

  /** The {@code error} tag of a stream message that failed with {@code error} (yarpc-go's). */
  public static String errorTagOf(Throwable error) {
    Throwable cause = Futures.unwrap(error);
    return cause instanceof YarpcException
        ? ((YarpcException) cause).code().wireName()
        : UNKNOWN_INTERNAL;
  }

  private static Outcome ofException(YarpcException e) {
    Response attached = e.response();
    ApplicationErrorMeta meta =
        attached != null && attached.isApplicationError() ? attached.applicationErrorMeta() : null;
    return ofCode(
        e.code(),
        e.getMessage(),
        meta == null ? null : meta.name(),
        meta == null ? null : meta.details());
  }

  private static Outcome ofApplicationError(ApplicationErrorMeta meta) {
    if (meta.code() != null) {
      return new Outcome(
          faultOf(meta.code()),
          meta.code().wireName(),
          meta.code(),
          meta.name(),
          meta.details(),
          meta.details(),
          true);
    }
    return new Outcome(
        FaultType.CLIENT,
        APPLICATION_ERROR,
        null,
        meta.name(),
        meta.details(),
        meta.details(),
        true);
  }

  private static Outcome ofCode(Code code, String message, String errorName, String details) {
    return new Outcome(faultOf(code), code.wireName(), code, errorName, message, details, false);
  }

  /** A code's fault type; one without ({@code ok}) is the server's, as in yarpc-go. */
  private static FaultType faultOf(Code code) {
    return code.faultType() == null ? FaultType.SERVER : code.faultType();
  }

  @Override
  public String toString() {
    return isSuccess()
        ? "success"
        : (isCallerFailure() ? "caller failure " : "server failure ") + errorTag;
  }
}
