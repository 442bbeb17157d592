package io.yarpc.encoding.protobuf.internal;

import com.google.protobuf.TypeRegistry;
import io.grpc.Metadata;
import io.grpc.Status;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.Futures;
import io.yarpc.transport.Response;
import java.util.concurrent.CancellationException;

/**
 * A failed YARPC call as grpc-java reports it: a {@link Status} with the same code and message, and
 * trailers holding the response headers and, when the error carries a {@code google.rpc.Status}, the
 * {@code grpc-status-details-bin} trailer — so {@code StatusProto.fromThrowable} on the stub's {@code
 * StatusRuntimeException} gives back the server's details. The status's code and message then come from
 * that {@code google.rpc.Status}, as grpc requires them to match.
 *
 * <p>The details come from the error's details bytes (in the call's encoding, or binary), else — for
 * transports that deliver a body but no details with an error, such as TChannel's application-error reply —
 * from the body of the application-error response attached to the error, when it is a {@code
 * google.rpc.Status} with the error's code. Attached response bodies are released here.
 */
final class ClientErrors {
  private static final int MAX_DETAILS_BODY = 1 << 20;

  private ClientErrors() {}

  /** A status and its trailers. */
  public record Failure(Status status, Metadata trailers) {}

  /** The grpc failure for {@code error} (any throwable; YARPC errors are mapped as described above). */
  public static Failure toGrpc(Throwable error, String encoding, TypeRegistry types) {
    Throwable root = Futures.unwrap(error);
    if (root instanceof CancellationException) {
      return new Failure(
          Status.CANCELLED.withDescription("call was cancelled").withCause(root), new Metadata());
    }
    YarpcException e = YarpcException.from(error);
    Metadata trailers = new Metadata();
    com.google.rpc.Status detail = StatusDetails.parse(e.details(), encoding, types);
    Response attached = e.response();
    if (attached != null) {
      try {
        if (detail == null && attached.isApplicationError()) {
          long length = attached.body().length();
          if (length != 0 && length <= MAX_DETAILS_BODY) {
            com.google.rpc.Status fromBody =
                StatusDetails.parse(attached.body().toByteArray(), encoding, types);
            if (fromBody != null && fromBody.getCode() == e.code().value()) {
              detail = fromBody;
            }
          }
        }
        HeaderMetadata.addTo(attached.headers(), trailers);
      } catch (RuntimeException unreadable) {
        // the error itself still goes through
      } finally {
        attached.body().release();
      }
    }
    Status status;
    if (detail != null) {
      status = Status.fromCodeValue(detail.getCode()).withDescription(detail.getMessage());
      trailers.put(ServerErrors.STATUS_DETAILS_KEY, detail);
    } else {
      status = Status.fromCodeValue(e.code().value()).withDescription(e.getMessage());
    }
    return new Failure(status.withCause(e), trailers);
  }
}
