package io.yarpc.encoding.protobuf;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.Any;
import com.google.protobuf.Message;
import io.grpc.Status;
import io.grpc.protobuf.StatusProto;
import io.yarpc.encoding.protobuf.internal.StatusDetails;
import io.yarpc.encoding.protobuf.internal.TypeRegistries;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import java.util.Optional;

/**
 * Errors with {@code google.rpc.Status} details (yarpc-go's {@code protobuf.NewError(code, message,
 * WithErrorDetails(...))} and {@code GetErrorDetails}), for code that works with YARPC errors rather than
 * grpc's {@code StatusRuntimeException}:
 *
 * <pre>{@code
 * throw ProtobufErrors.newError(Code.INVALID_ARGUMENT, "bad key",
 *     BadRequest.newBuilder().addFieldViolations(...).build());
 * ...
 * com.google.rpc.Status st = ProtobufErrors.status(e).orElseThrow();   // on the client
 * }</pre>
 *
 * A served grpc method may throw such an error or pass it to {@code onError}; it reaches the caller with
 * its code, message and details whatever the transport (see {@link ProtobufProcedures}). Details are packed
 * as {@code Any} and stay so: unpack them with {@code Any.unpack} or {@code Any.is}.
 */
public final class ProtobufErrors {
  private ProtobufErrors() {}

  /**
   * A {@link YarpcException} with {@code code} and {@code message} whose details are a serialised {@code
   * google.rpc.Status} holding the same code and message and {@code details} packed as {@code Any}.
   */
  public static YarpcException newError(Code code, String message, Message... details) {
    requireNonNull(code, "code");
    requireNonNull(message, "message");
    com.google.rpc.Status.Builder st =
        com.google.rpc.Status.newBuilder().setCode(code.value()).setMessage(message);
    for (Message d : details) {
      st.addDetails(d instanceof Any ? (Any) d : Any.pack(d));
    }
    return YarpcException.of(code, "%s", message).withDetails(st.build().toByteArray());
  }

  /**
   * The {@code google.rpc.Status} an error carries: the details of a {@link YarpcException} (binary or
   * proto3 JSON, also wrapped in a {@code CompletionException}) — or, for transports that deliver details
   * only as the body of the application-error response attached to the error (TChannel), that body while
   * it is not released (read through its byte access, never consumed) — or the {@code grpc-status-details-bin} trailer of a grpc {@code
   * StatusRuntimeException} / {@code StatusException}.
   */
  public static Optional<com.google.rpc.Status> status(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      if (t instanceof YarpcException) {
        YarpcException e = (YarpcException) t;
        com.google.rpc.Status st =
            StatusDetails.parse(e.details(), Protobuf.JSON_ENCODING, TypeRegistries.ERROR_DETAILS);
        if (st == null
            && e.response() != null
            && e.response().isApplicationError()
            && e.response().body().hasByteAccess()
            && !e.response().body().isReleased()) {
          try {
            st =
                StatusDetails.parse(
                    e.response().body().toByteArray(),
                    Protobuf.JSON_ENCODING,
                    TypeRegistries.ERROR_DETAILS);
            if (st != null && st.getCode() != e.code().value()) {
              st = null;
            }
          } catch (RuntimeException unreadable) {
            st = null;
          }
        }
        return Optional.ofNullable(st);
      }
      if (t instanceof io.grpc.StatusRuntimeException || t instanceof io.grpc.StatusException) {
        com.google.rpc.Status st = StatusProto.fromThrowable(t);
        if (st != null
            && st.getCode() != Status.Code.OK.value()
            && (st.getDetailsCount() > 0 || !st.getMessage().isEmpty())) {
          return Optional.of(st);
        }
        return Optional.empty();
      }
    }
    return Optional.empty();
  }

  /**
   * The application-error name YARPC reports for a status: its first detail's message name without
   * package (e.g. {@code BadRequest}), or {@code null} without details.
   */
  public static String applicationErrorName(com.google.rpc.Status status) {
    return StatusDetails.firstDetailName(requireNonNull(status, "status"));
  }
}
